"""Recall and search: the planner, its legs, fusion, boosts and the context block.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.recall.asks import (
    DEFAULT_TOP_K,
    MAX_TOP_K,
    Ask,
    When,
    recall,
    search,
)
from palimpsest.resolvers.recall.context_block import (
    DEFAULT_BUDGET_TOKENS,
    ContextBlock,
    ContextItem,
    context,
)
from palimpsest.resolvers.recall.controls import Controls
from palimpsest.resolvers.recall.controls import Report as ControlsReport
from palimpsest.resolvers.recall.hits import Explain, Hit
from palimpsest.resolvers.recall.timing import RequestTiming

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "DEFAULT_TOP_K",
    "MAX_TOP_K",
    "Ask",
    "ContextBlock",
    "ContextItem",
    "Controls",
    "ControlsReport",
    "Explain",
    "Hit",
    "RequestTiming",
    "When",
    "context",
    "recall",
    "search",
]
