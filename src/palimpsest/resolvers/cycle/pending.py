"""What waits on the harvest queue: a caller's own spans, a tenant's for its admins, and the
figures behind the Prometheus gauges.

A user sees the counts of their own spans and their dead letters (with the error that killed
each). A tenant admin sees the tenant's counts, never another user's spans or errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest import paging
from palimpsest.cypher import harvest as hq
from palimpsest.cypher import queue as q
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.identity.permissions import require, tenant_admin
from palimpsest.resolvers.cycle.harvesting import STATUS_PARAMS, Status
from palimpsest.resolvers.services import Services

MAX_DEAD_LETTERS = 1000  # per page
LIST_NAME = "deadLetters"
MAX_REQUEUE = 1000


@dataclass(frozen=True, slots=True)
class DeadLetter:
    span_id: str
    source_id: str | None
    session_id: str | None
    attempts: int
    error: str | None
    dead_at: datetime | None


@dataclass(frozen=True, slots=True)
class PendingWork:
    scope: Scope
    queued: int  # waiting for a worker (not under a live lease)
    leased: int  # under a live lease
    done: int
    dead: int
    oldest_queued_seconds: float | None  # age of the oldest span not yet done
    consolidators: int = 0  # consolidator workers running in the server that answered


async def pending_work(svc: Services, who: Principal, scope: Scope) -> PendingWork:
    now = svc.clock()
    params = {**STATUS_PARAMS, "now": now}
    if scope is Scope.USER:
        ref = resolve_scope(who, Scope.USER)
        rows = await svc.db.scoped(ref).read(hq.QUEUE_COUNTS, params)
        return _work(scope, rows, now, svc.wake.workers)
    if scope is Scope.TENANT:
        require(tenant_admin(who), "the tenant's pending work is visible to tenant admins only")
        ref = resolve_scope(who, Scope.TENANT)
        rows = await svc.db.read(q.TENANT_QUEUE_COUNTS, {**params, "tenant": ref.tenant_id})
        return _work(scope, rows, now, svc.wake.workers)
    raise InvalidArgument("spans wait in USER scopes: ask for USER (yours) or TENANT (admins)")


async def dead_letters(
    svc: Services, who: Principal, limit: int, after: str | None
) -> paging.Page[DeadLetter]:
    """The caller's own dead letters, newest first, with the error that stopped each."""
    ref = resolve_scope(who, Scope.USER)
    paging.check_limit(limit, MAX_DEAD_LETTERS)
    position = paging.decode(after, LIST_NAME, (paging.Part.TIME, paging.Part.ID))
    at, span_id = position or (None, None)
    params = {**STATUS_PARAMS, "limit": limit + 1, "after_at": at, "after_id": span_id}
    rows = await svc.db.scoped(ref).read(hq.DEAD_LETTERS, params)
    letters = [
        DeadLetter(
            r["id"], r["source_id"], r["session_id"], r["attempts"], r["error"], r["dead_at"]
        )
        for r in rows
    ]
    return paging.page(letters, limit, LIST_NAME, lambda d: [d.dead_at, d.span_id])


async def requeue(svc: Services, who: Principal, span_ids: Sequence[str]) -> list[str]:
    """Give the caller's own dead letters another round of attempts."""
    ref = resolve_scope(who, Scope.USER)
    if not 1 <= len(span_ids) <= MAX_REQUEUE:
        raise InvalidArgument(f"give 1 to {MAX_REQUEUE} span ids")
    params = {**STATUS_PARAMS, "ids": list(span_ids), "now": svc.clock()}
    return [r["id"] for r in await svc.db.scoped(ref).write(q.REQUEUE_DEAD, params)]


def _work(
    scope: Scope, rows: list[dict[str, Any]], now: datetime, consolidators: int
) -> PendingWork:
    by = {r["status"]: r for r in rows}
    queued = by.get(Status.QUEUED, {})
    leased = int(queued.get("leased") or 0)
    oldest = queued.get("oldest")
    return PendingWork(
        scope=scope,
        queued=int(queued.get("spans") or 0) - leased,
        leased=leased,
        done=int(by.get(Status.DONE, {}).get("spans") or 0),
        dead=int(by.get(Status.DEAD, {}).get("spans") or 0),
        oldest_queued_seconds=(now - oldest).total_seconds() if oldest else None,
        consolidators=consolidators,
    )
