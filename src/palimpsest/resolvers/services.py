"""What every resolver needs, built once in the app lifespan and passed in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.cypher.executor import Database
from palimpsest.embedding import CachedEmbedder, Embedder, Vector
from palimpsest.sqlmem import SqlStore


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Services:
    db: Database
    embedder: Embedder
    settings: Settings
    sql: SqlStore
    clock: Callable[[], datetime] = field(default=utc_now)

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Embed off the event loop (the model is CPU-bound), unless every text is cached."""
        if isinstance(self.embedder, CachedEmbedder):
            known = self.embedder.peek(texts)
            if known is not None:
                return known
        return await anyio.to_thread.run_sync(self.embedder.embed, list(texts))
