"""Fact pairs judged by the consolidator (docs/extraction.md, Judging conflicts).

After a visit writes a scope's batches, the worker asks its judge about the scope's oldest
pending pairs (at most one call's worth): outside any write's transaction and holding no
lease, so the model's latency holds neither the scope's lock nor a span. Verdicts are then
recorded in one short write; a failed call is counted on its pairs, which stay pending.
"""

from __future__ import annotations

import logging
from collections import Counter

from palimpsest.identity import ScopeRef
from palimpsest.resolvers.facts import conflicts
from palimpsest.resolvers.services import Services
from palimpsest.schema.pairs import Judge, TokenCap

log = logging.getLogger(__name__)


async def judge_scope(
    svc: Services, judge: Judge, ref: ScopeRef, limit: int, cap: TokenCap | None
) -> Counter[str]:
    """Judge up to ``limit`` pending pairs of the scope; the counts for the summary."""
    db = svc.db.scoped(ref)
    pairs = await conflicts.pending(db, limit)
    if not pairs:
        return Counter()
    judged = await judge.judge(pairs, cap)
    now = svc.clock()
    counts: Counter[str] = Counter(judged.counts)
    counts["judged"] = await conflicts.record_verdicts(db, judged.rulings, judged.judged_by, now)
    await conflicts.count_failures(db, judged.failed, now)
    return +counts
