"""The consolidator's queue: which scopes wait, leases, acknowledgements and failures.

Every operation on spans runs through a handle bound to the span owner's USER scope, resolved
for the consolidator acting for that user (``identity.acting``). Only ``pending_scopes`` reads
across scopes, and it returns scope ids, never content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson

from palimpsest.cypher import queue as q
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.identity import Scope, ScopeRef
from palimpsest.identity.acting import HarvestedRun
from palimpsest.resolvers.cycle.harvesting import STATUS_PARAMS, fact_draft
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import FactDraft

LOST_ERROR = "the worker holding the lease stopped answering (lease expired too often)"
MAX_ERROR = 2000
# A worker that lost the race for the oldest spans tries again: the next ones are free.
LEASE_TRIES = 4


@dataclass(frozen=True, slots=True)
class WaitingScope:
    tenant_id: str
    owner_id: str
    scope_key: str


@dataclass(frozen=True, slots=True)
class LeasedSpan:
    id: str
    seq: int
    text: str
    speaker: str | None
    role: str | None
    observed_at: datetime | None
    facts: tuple[FactDraft, ...]  # the candidate facts sent with the span, decoded once
    source_id: str | None
    compaction_generation: int | None
    run: HarvestedRun
    attempts: int
    takeovers: int


@dataclass(frozen=True, slots=True)
class Lease:
    owner: str
    spans: list[LeasedSpan]
    dead: list[str]  # exhausted spans turned into dead letters while leasing
    until: datetime
    contended: bool = False  # spans were there, but another worker leased them first


async def pending_scopes(svc: Services, limit: int) -> list[WaitingScope]:
    params = {**STATUS_PARAMS, "now": svc.clock(), "limit": limit}
    rows = await svc.db.read(q.PENDING_SCOPES, params)
    return [WaitingScope(r["tenant_id"], r["owner_id"], r["scope_key"]) for r in rows]


async def lease(
    svc: Services, ref: ScopeRef, owner: str, limit: int, seconds: float, max_attempts: int
) -> Lease:
    """Lease up to ``limit`` spans of the scope, oldest first, atomically."""
    now = svc.clock()
    until = now + timedelta(seconds=seconds)
    base = {**STATUS_PARAMS, "now": now, "owner": owner}

    async def work(tx: ScopedTx) -> Lease:
        locked = await tx.run(q.LOCK_LEASABLE, {**base, "limit": limit})
        ids = [r["id"] for r in locked]
        if not ids:
            return Lease(owner, [], [], until, contended=False)
        dead = await tx.run(
            q.EXHAUST_SPANS,
            {**base, "ids": ids, "max_attempts": max_attempts, "lost_error": LOST_ERROR},
        )
        rows = await tx.run(q.LEASE_SPANS, {**base, "ids": ids, "until": until})
        spans = [_span(r["span"]) for r in rows]
        return Lease(owner, spans, [r["id"] for r in dead], until, contended=not rows)

    for _ in range(LEASE_TRIES):
        got = await svc.db.scoped(ref).write_tx(work)
        if got.spans or got.dead or not got.contended:
            return got
    return got


async def held(tx: ScopedTx, ids: Sequence[str], owner: str) -> set[str]:
    """Under the spans' write locks: those this worker still holds (not acked, not taken)."""
    params = {**STATUS_PARAMS, "ids": list(ids), "owner": owner}
    await tx.run(q.LOCK_SPANS, params)
    return {r["id"] for r in await tx.run(q.HELD_SPANS, params)}


async def ack(tx: ScopedTx, owner: str, documents: dict[str, str], now: datetime) -> list[str]:
    """Mark spans done (``documents``: span id -> its conversation), in the writing transaction."""
    params = {
        **STATUS_PARAMS,
        "ids": list(documents),
        "owner": owner,
        "documents": documents,
        "now": now,
    }
    return [r["id"] for r in await tx.run(q.ACK_SPANS, params)]


async def fail(
    svc: Services,
    ref: ScopeRef,
    owner: str,
    failures: Sequence[tuple[str, str]],
    max_attempts: int,
    backoff_seconds: float,
) -> list[tuple[str, bool]]:
    """Record each span's error; it is retried after a back-off, or becomes a dead letter."""
    params = {
        **STATUS_PARAMS,
        "failures": [{"id": i, "error": e[:MAX_ERROR]} for i, e in failures],
        "owner": owner,
        "now": svc.clock(),
        "max_attempts": max_attempts,
        "backoff_seconds": backoff_seconds,
    }
    rows = await svc.db.scoped(ref).write(q.FAIL_SPANS, params)
    return [(r["id"], bool(r["exhausted"])) for r in rows]


async def release(svc: Services, ref: ScopeRef, owner: str, ids: Sequence[str]) -> int:
    params = {**STATUS_PARAMS, "ids": list(ids), "owner": owner, "now": svc.clock()}
    return len(await svc.db.scoped(ref).write(q.RELEASE_SPANS, params))


def _span(row: dict[str, Any]) -> LeasedSpan:
    return LeasedSpan(
        id=row["id"],
        seq=int(row["seq"]),
        text=row["text"],
        speaker=row["speaker"],
        role=row["role"],
        observed_at=row["observed_at"],
        facts=tuple(fact_draft(f) for f in orjson.loads(row["facts"])) if row["facts"] else (),
        source_id=row["source_id"],
        compaction_generation=row["compaction_generation"],
        run=HarvestedRun(
            session_id=row["session_id"],
            run_id=row["run_id"],
            agent_name=row["agent_name"],
            model=row["model"],
            memory_scopes=_scopes(row["grant_memory"]),
            sql_scopes=_scopes(row["grant_sql"]),
            isolated=bool(row["isolated"]),
        ),
        attempts=int(row["attempts"]),
        takeovers=int(row["takeovers"]),
    )


def _scopes(names: list[str] | None) -> frozenset[Scope] | None:
    return None if names is None else frozenset(Scope(n) for n in names)
