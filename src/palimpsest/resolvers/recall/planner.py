"""Hybrid recall (docs/spec.md, Recall and search): per scope and kind of row, a vector leg
and a scope-local BM25 leg, each a ranked list; the lists are fused by Reciprocal Rank Fusion,
then soft preferences read from the question (dates, "when", years, a named speaker) boost the
fused score. Nothing from another scope reaches a score, a rank or the candidate pools.

``recall`` runs one request's plan (``plan.RecallPlan``: its text side, vector side and
finish), timed as the "resolver" stage (``timing``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace as dc_replace

from palimpsest.identity import Principal, Scope, resolve_scope
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
    "by_rank",
    "recall",
]


async def recall(
    svc: Services, who: Principal, scopes: Sequence[Scope], req: RecallRequest
) -> RecallResult:
    with timing.timed("resolver"):
        groups = await svc.db.partition([resolve_scope(who, s) for s in dict.fromkeys(scopes)])
        if len(groups) <= 1:  # one server (or one shard holds every scope): one plan
            plan = await RecallPlan.of(svc, who, scopes, req)
            return await plan.run()
        # Tenant shards, GLOBAL on another shard than the tenant: each shard's scopes are
        # planned, fused and loaded there, in parallel, and the answers fused by rank.
        plans = [
            await RecallPlan.of(dc_replace(svc, db=db), who, [r.scope for r in refs], req)
            for db, refs in groups
        ]
        results = await asyncio.gather(*(plan.run() for plan in plans))
        return by_rank(list(results), req.top_k)


def by_rank(results: list[RecallResult], top_k: int) -> RecallResult:
    """Answers of disjoint scopes fused by rank: each one's first hits, then each one's
    second, and so on, in the order of the scopes asked; a hit keeps its own score and
    explanation (scores of two shards' fusions are not on one scale, ranks are). The
    first answer's reports stand for the request."""
    ranked = sorted(
        (
            (rank, i, hit)
            for i, result in enumerate(results)
            for rank, hit in enumerate(result.hits)
        ),
        key=lambda t: (t[0], t[1]),
    )
    first = results[0]
    return dc_replace(
        first,
        hits=[hit for _, _, hit in ranked][:top_k],
        sources_applied=all(r.sources_applied for r in results),
        scopes=[scope for r in results for scope in r.scopes],
    )
