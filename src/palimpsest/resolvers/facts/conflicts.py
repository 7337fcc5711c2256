"""Fact pairs judged (docs/extraction.md, Judging conflicts): recorded when written, asked
about by the consolidator (or at once by ``judgeConflicts``), listed by ``factConflicts``.

A fact write (``ledger.write_batch``), with judging on, records in its own transaction a pair
for each stored fact close to a written one that did not merge (``dedup.merge_and_band``):
the pair exists exactly when the write does. The consolidator (or ``judgeConflicts``) later
reads a scope's pending pairs (``pending``), asks the judge outside any write's transaction,
and records the verdicts (``record_verdicts``) or the failed attempt (``count_failures``). A
verdict closes and deletes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from palimpsest import paging
from palimpsest.cypher import conflicts as q
from palimpsest.cypher.driver.executor import Row, ScopedDatabase, ScopedTx
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.facts.decode import fact_from
from palimpsest.resolvers.facts.dedup import Close
from palimpsest.resolvers.services import Services
from palimpsest.schema.pairs import FactConflict, PairFact, PairVerdict, PendingPair, Ruling

MAX_LIST_LIMIT = 1000
LIST_NAME = "factConflicts"
# Failed calls a pair may take before it is no longer asked (it stays listed, unjudged).
MAX_JUDGE_ATTEMPTS = 3


def pair_id(a: str, b: str) -> str:
    """One id per pair of facts, whichever was written first."""
    first, second = sorted((a, b))
    return hashlib.sha256(f"{first}\x1f{second}".encode()).hexdigest()[:32]


async def record(
    tx: ScopedTx, band: Sequence[Close], written: Mapping[int, str], now: datetime
) -> None:
    """Record the band's pairs in the write's transaction (``written``: fact ids by row; a
    pair of two rows of the batch names the earlier row's fact as the older)."""
    pairs: dict[str, dict[str, Any]] = {}
    for c in band:
        older = c.fact_id if c.other is None else written.get(c.other)
        newer = written.get(c.index)
        if older is None or newer is None or older == newer:
            continue
        key = pair_id(older, newer)
        pairs.setdefault(key, {"id": key, "older_id": older, "newer_id": newer, "cosine": c.cosine})
    if pairs:
        await tx.run(q.RECORD_FACT_PAIRS, {"pairs": list(pairs.values()), "now": now})


async def pending(db: ScopedDatabase, limit: int) -> list[PendingPair]:
    """The scope's oldest pairs without a verdict (and not given up on)."""
    params = {"limit": limit, "max_attempts": MAX_JUDGE_ATTEMPTS}
    rows = await db.read(q.PENDING_FACT_PAIRS, params)
    return [
        PendingPair(
            r["id"],
            _side(r["older"], r["older_subject"], r["older_object"]),
            _side(r["newer"], r["newer_subject"], r["newer_object"]),
        )
        for r in rows
    ]


async def count_pending(db: ScopedDatabase) -> int:
    """The scope's pairs ``pending`` would still return, whatever the limit."""
    [row] = await db.read(q.COUNT_PENDING_FACT_PAIRS, {"max_attempts": MAX_JUDGE_ATTEMPTS})
    return int(row["pending"])


def _side(f: dict[str, Any], subject: str, obj: str) -> PairFact:
    return PairFact(
        f["text"], subject, f["predicate"], obj, f["valid_at"], f["invalid_at"], f["observed_at"]
    )


async def record_verdicts(
    db: ScopedDatabase, rulings: Mapping[str, Ruling], judged_by: str, now: datetime
) -> int:
    """Record verdicts on pairs still unjudged; the number recorded."""
    if not rulings:
        return 0
    params = {
        "rulings": [
            {"id": i, "verdict": r.verdict.value, "reason": r.reason} for i, r in rulings.items()
        ],
        "judged_by": judged_by,
        "now": now,
    }
    [row] = await db.write(q.RECORD_VERDICTS, params)
    return int(row["judged"])


async def count_failures(db: ScopedDatabase, ids: Sequence[str], now: datetime) -> None:
    if ids:
        await db.write(q.COUNT_JUDGE_FAILURES, {"ids": list(ids), "now": now})


async def list_conflicts(
    svc: Services,
    who: Principal,
    scope: Scope,
    verdicts: Sequence[PairVerdict] | None,
    pending_only: bool,
    limit: int,
    after: str | None,
) -> paging.Page[FactConflict]:
    """The scope's recorded pairs, newest first, with both facts and the verdict (if any).

    ``verdicts`` keeps pairs judged so; ``pending_only`` pairs not judged yet (both: either).
    """
    ref = resolve_scope(who, scope)
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, LIST_NAME, (paging.Part.TIME, paging.Part.ID))
    at, last = position or (None, None)
    params = {
        "verdicts": None if verdicts is None else [v.value for v in verdicts],
        "pending": pending_only,
        "limit": limit + 1,
        "after_at": at,
        "after_id": last,
    }
    rows = await svc.db.scoped(ref).read(q.LIST_FACT_PAIRS, params)
    found = [_conflict(scope, r, who) for r in rows]
    return paging.page(found, limit, LIST_NAME, lambda c: [c.created_at, c.id])


def _conflict(scope: Scope, row: Row, who: Principal) -> FactConflict:
    p = row["pair"]
    return FactConflict(
        id=p["id"],
        older=fact_from(scope, row["older"], who),
        newer=fact_from(scope, row["newer"], who),
        cosine=float(p["cosine"]),
        created_at=p["created_at"],
        verdict=PairVerdict(p["verdict"]) if p["verdict"] else None,
        reason=p["reason"],
        judged_by=p["judged_by"],
        judged_at=p["judged_at"],
    )
