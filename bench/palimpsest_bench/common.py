"""Small pieces every harness shares: the caller it acts as, and bounded concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from palimpsest.identity import Principal, Scope


def principal(tenant: str, user: str, agent: str = "eval") -> Principal:
    """A caller who owns one user scope, as a run token would name it; what it writes is a
    bulk import by operator tooling (origin ``import``)."""
    return Principal(
        tenant_id=tenant,
        user_id=user,
        agent_name=agent,
        session_id=None,
        run_id=None,
        model=None,
        roles=frozenset(),
        memory_scopes=frozenset({Scope.USER}),
        sql_scopes=frozenset(),
        isolated=False,
        bulk_import=True,
    )


async def gather_limited(jobs: Sequence[Callable[[], Awaitable[Any]]], limit: int) -> list[Any]:
    """Run jobs concurrently, at most ``limit`` at a time, results in order."""
    gate = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            return await job()

    return await asyncio.gather(*(one(j) for j in jobs))
