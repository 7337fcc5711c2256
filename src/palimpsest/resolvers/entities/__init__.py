"""Entities: one entity per name, merges, duplicates and graph reads.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.entities.graph import (
    MAX_LIST_LIMIT,
    find_entities,
    recall,
    set_aliases,
)
from palimpsest.resolvers.entities.merging import merge, merges, unmerge

__all__ = [
    "MAX_LIST_LIMIT",
    "find_entities",
    "merge",
    "merges",
    "recall",
    "set_aliases",
    "unmerge",
]
