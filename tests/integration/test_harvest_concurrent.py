"""Concurrent harvests into one user's scope (docs/notes/freshness.md): each takes the scope's
lock before anything else of the scope, so they queue behind one another and never deadlock
on the ``:Scope`` node, which the driver would retry after a back-off of a second or more."""

from __future__ import annotations

import asyncio
import uuid

from palimpsest.identity import Principal, Role
from palimpsest.resolvers.cycle.harvesting import SpanDraft, harvest
from palimpsest.resolvers.services import Services

CALLS = 8


def _run_of(tenant: str, user: str) -> Principal:
    return Principal(
        tenant_id=tenant,
        user_id=user,
        agent_name="writer",
        session_id=f"s-{uuid.uuid4().hex[:8]}",
        run_id=f"r-{uuid.uuid4().hex[:8]}",
        model=None,
        roles=frozenset[Role](),
        memory_scopes=None,
        sql_scopes=None,
        isolated=False,
    )


async def _concurrent(svc: Services, tenant: str, user: str, *, first: bool) -> None:
    runs = [_run_of(tenant, user) for _ in range(CALLS)]
    if not first:  # the scope's node and its counters exist already: every call finds them
        await harvest(svc, _run_of(tenant, user), [SpanDraft(text="a first turn")], 0)
    spans = [[SpanDraft(f"turn {i}.{j}", source_id=f"{j}") for j in range(3)] for i in range(CALLS)]
    receipts = await asyncio.gather(
        *(harvest(svc, run, batch, 0) for run, batch in zip(runs, spans, strict=True))
    )
    assert [r.accepted for r in receipts] == [3] * CALLS


async def test_concurrent_harvests_into_a_new_scope_never_retry(
    svc: Services, ran: list[str], tenant_id: str
) -> None:
    await _concurrent(svc, tenant_id, f"u-{uuid.uuid4().hex[:8]}", first=True)
    # One run of the harvest's statement per call: a deadlock would have run one again.
    assert ran.count("HARVEST_SPANS") == CALLS


async def test_concurrent_harvests_into_an_existing_scope_never_retry(
    svc: Services, ran: list[str], tenant_id: str
) -> None:
    await _concurrent(svc, tenant_id, f"u-{uuid.uuid4().hex[:8]}", first=False)
    assert ran.count("HARVEST_SPANS") == CALLS + 1
