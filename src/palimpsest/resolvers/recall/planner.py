"""Hybrid recall (docs/spec.md, Recall and search): per scope and kind of row, a vector leg
and a scope-local BM25 leg, each a ranked list; the lists are fused by Reciprocal Rank Fusion,
then soft preferences read from the question (dates, "when", years, a named speaker) boost the
fused score. Nothing from another scope reaches a score, a rank or the candidate pools.

``recall`` runs one request's plan (``plan.RecallPlan``: its text side, vector side and
finish), timed as the "resolver" stage (``timing``).
"""

from __future__ import annotations

from collections.abc import Sequence

from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.recall import legs, timing
from palimpsest.resolvers.recall.controls import Report as ControlsReport
from palimpsest.resolvers.recall.hits import (
    BoostPart,
    Explain,
    Hit,
    LegPart,
    TimeFilterReport,
)
from palimpsest.resolvers.recall.plan import MAX_POOL, MAX_QUERY_CHARS, RecallPlan, RecallResult
from palimpsest.resolvers.recall.request import Mode, RecallRequest
from palimpsest.resolvers.services import Services

MAX_FETCH = legs.MAX_FETCH
ANN_FLOOR = legs.ANN_FLOOR
__all__ = [
    "MAX_POOL",
    "MAX_QUERY_CHARS",
    "BoostPart",
    "ControlsReport",
    "Explain",
    "Hit",
    "LegPart",
    "Mode",
    "RecallRequest",
    "RecallResult",
    "TimeFilterReport",
    "recall",
]


async def recall(
    svc: Services, who: Principal, scopes: Sequence[Scope], req: RecallRequest
) -> RecallResult:
    with timing.timed("resolver"):
        plan = await RecallPlan.of(svc, who, scopes, req)
        return await plan.run()
