"""Fact pairs judged (docs/extraction.md, Judging conflicts): by the consolidator, and on
demand (``judgeConflicts``, ``palimpsest judge``).

After a visit writes a scope's batches, the worker asks its judge about the scope's oldest
pending pairs (at most one call's worth): outside any write's transaction and holding no
lease, so the model's latency holds neither the scope's lock nor a span. Verdicts are then
recorded in one short write; a failed call is counted on its pairs, which stay pending.

On demand, a caller has any scope it may write judged now (its TENANT scope, or a user's
pairs from ``assertFacts`` that no consolidator visit reaches), the same way: the pairs read,
the model asked with nothing held, the verdicts written after.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from palimpsest import paging
from palimpsest.errors import Unavailable
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.resolvers.cycle.tokens import TokenDay
from palimpsest.resolvers.facts import conflicts
from palimpsest.resolvers.services import Services
from palimpsest.schema.pairs import Judge, JudgeRun, PendingPair, TokenCap

log = logging.getLogger(__name__)
# Pairs one ``judgeConflicts`` asks about at most (a call per PALIMPSEST_JUDGE_PAIRS_PER_CALL
# of them): the request's own timeout bounds the rest.
MAX_JUDGE_LIMIT = 200
NO_MODEL = (
    "no model is configured to judge fact pairs: set PALIMPSEST_MODEL_URL and "
    "PALIMPSEST_MODEL_NAME (and leave PALIMPSEST_JUDGE_CONFLICTS on)"
)


async def judge_scope(
    svc: Services, judge: Judge, ref: ScopeRef, limit: int, cap: TokenCap | None
) -> Counter[str]:
    """Judge up to ``limit`` pending pairs of the scope; the counts for the summary."""
    db = svc.db.scoped(ref)
    pairs = await conflicts.pending(db, limit)
    return await _judged(svc, judge, ref, pairs, cap)


async def judge_now(
    svc: Services, who: Principal, scope: Scope, limit: int | None = None
) -> JudgeRun:
    """Judge the scope's oldest pending pairs now, ``limit`` of them (default one call's
    worth): the scope checked as for a write, the tokens the caller's tenant's.

    Refused (``UNAVAILABLE``) when no model is configured, before anything is read."""
    ref = resolve_scope(who, scope)
    judge = svc.judge
    if judge is None:
        raise Unavailable(NO_MODEL, setting="PALIMPSEST_MODEL_URL")
    wanted = paging.check_limit(judge.pairs_per_call if limit is None else limit, MAX_JUDGE_LIMIT)
    db = svc.db.scoped(ref)
    pairs = await conflicts.pending(db, wanted)
    counts = await _judged(svc, judge, ref, pairs, TokenDay(svc, tenant_config_ref(who)))
    return JudgeRun(
        asked=len(pairs),
        judged=counts["judged"],
        dropped=counts["judge_dropped"],
        failed=counts["judge_failed"],
        refused=counts["judge_refused"],
        pending=await conflicts.count_pending(db),
    )


async def _judged(
    svc: Services,
    judge: Judge,
    ref: ScopeRef,
    pairs: Sequence[PendingPair],
    cap: TokenCap | None,
) -> Counter[str]:
    """Ask about ``pairs`` (no transaction open, nothing locked), then record the verdicts
    and the failed calls in short writes of their own."""
    if not pairs:
        return Counter()
    db = svc.db.scoped(ref)
    judged = await judge.judge(pairs, cap)
    now = svc.clock()
    counts: Counter[str] = Counter(judged.counts)
    counts["judged"] = await conflicts.record_verdicts(db, judged.rulings, judged.judged_by, now)
    await conflicts.count_failures(db, judged.failed, now)
    return +counts
