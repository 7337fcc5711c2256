"""Facts: assert, supersede, retract and judge in time, and what a fact write checks.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.facts.conflicts import MAX_LIST_LIMIT as MAX_CONFLICTS_LIMIT
from palimpsest.resolvers.facts.conflicts import list_conflicts
from palimpsest.resolvers.facts.entity_resolution import (
    MAX_LIMIT,
    MAX_SCAN,
    MIN_SIMILARITY,
    duplicates,
)
from palimpsest.resolvers.facts.inputs import VALUE_TYPE, prepare
from palimpsest.resolvers.facts.ledger import (
    MAX_LIST_LIMIT,
    Closed,
    assert_facts,
    find_fact,
    history,
    judge,
    list_facts,
    retract,
    supersede,
    time_view,
)

__all__ = [
    "MAX_CONFLICTS_LIMIT",
    "MAX_LIMIT",
    "MAX_LIST_LIMIT",
    "MAX_SCAN",
    "MIN_SIMILARITY",
    "VALUE_TYPE",
    "Closed",
    "assert_facts",
    "duplicates",
    "find_fact",
    "history",
    "judge",
    "list_conflicts",
    "list_facts",
    "prepare",
    "retract",
    "supersede",
    "time_view",
]
