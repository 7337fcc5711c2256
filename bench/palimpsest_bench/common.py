"""Small pieces every harness shares: the caller it acts as, and bounded concurrency."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

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


QUERY_CONCURRENCY = 8  # the evaluations' questions in flight at once


async def gather_limited(jobs: Sequence[Callable[[], Awaitable[Any]]], limit: int) -> list[Any]:
    """Run jobs concurrently, at most ``limit`` at a time, results in order."""
    gate = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            return await job()

    return await asyncio.gather(*(one(j) for j in jobs))


class HashEmbedder:
    """Deterministic vectors without a model: each word gets a pseudo-random unit vector from
    its hash, and a text is the normalised sum of its words' vectors (random indexing). Texts
    sharing words are near each other, so the data has structure like a real embedding's
    (a nearest-neighbour index meets clusters, not uniform noise), and a query embedded the
    same way finds the rows that share its words. Loads a large dataset at database speed
    (``--synthetic-vectors``); latency is measured with the real model on the query side,
    overlap with queries embedded this way too."""

    def __init__(self, model_name: str, dimensions: int) -> None:
        self.model_name = model_name
        self.dimensions = dimensions
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        v = self._words.get(word)
        if v is None:
            seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "big")
            v = np.random.default_rng(seed).standard_normal(self.dimensions)
            self._words[word] = v = v / np.linalg.norm(v)
        return v

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return [Vector(row.tolist()) for row in self.matrix(texts)]

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors as rows of one array (what ``embed`` returns, as floats)."""
        out = np.empty((len(texts), self.dimensions))
        for i, text in enumerate(texts):
            words = _WORD.findall(text.lower()) or [text]
            v = np.sum([self._word(w) for w in words], axis=0)
            out[i] = v / (np.linalg.norm(v) or 1.0)
        return out


_WORD = re.compile(r"[a-z0-9]+")
