"""A tenant's settings and limits: quotas, usage, the ontology and retention.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.tenant.ontology import (
    StoredOntology,
    assert_placed,
    get_ontology,
    placement,
    set_ontology,
)
from palimpsest.resolvers.tenant.plane_usage import PlaneUsage, usage
from palimpsest.resolvers.tenant.retention import (
    RetentionPolicy,
    retention_policy,
    set_retention_policy,
)

__all__ = [
    "PlaneUsage",
    "RetentionPolicy",
    "StoredOntology",
    "assert_placed",
    "get_ontology",
    "placement",
    "retention_policy",
    "set_ontology",
    "set_retention_policy",
    "usage",
]
