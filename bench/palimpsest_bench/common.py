"""Small pieces every harness shares: the caller it acts as, and bounded concurrency."""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from palimpsest.embedding import Vector
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


class HashEmbedder:
    """Deterministic pseudo-random unit vectors from each text's hash: loads a large latency
    dataset at database speed (``--synthetic-vectors``). The vectors mean nothing, so only
    timings are measured on such data, never quality; queries still use the real model."""

    def __init__(self, model_name: str, dimensions: int) -> None:
        self.model_name = model_name
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        out: list[Vector] = []
        for text in texts:
            rng = random.Random(hashlib.sha256(text.encode()).digest())
            v = [rng.gauss(0.0, 1.0) for _ in range(self.dimensions)]
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append(Vector([x / norm for x in v]))
        return out
