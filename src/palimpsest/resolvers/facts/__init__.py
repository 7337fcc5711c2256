"""Facts: assert, supersede, retract and judge in time, and what a fact write checks.

The face of the plane: what the doors call. Its modules import one another directly.
"""

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
    "MAX_LIST_LIMIT",
    "Closed",
    "assert_facts",
    "find_fact",
    "history",
    "judge",
    "list_facts",
    "retract",
    "supersede",
    "time_view",
]
