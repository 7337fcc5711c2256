"""What every resolver needs, built once in the app lifespan and passed in."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.cypher.driver.causal import bind_tenant
from palimpsest.cypher.driver.executor import Database
from palimpsest.cypher.extension import CYPHER, SearchEngine
from palimpsest.embedding import Embedder, QueryVectors, Vector
from palimpsest.embedding.models import ActiveEmbedder, embed_queries
from palimpsest.identity.principal import Principal
from palimpsest.schema.pairs import Judge
from palimpsest.sqlmem import SqlStore
from palimpsest.workers.offload import Offload


def utc_now() -> datetime:
    return datetime.now(UTC)


def acting_for(who: Principal) -> Principal:
    """``who``, with the rest of this task's database work routed to its tenant's shard
    (tenant shards, ``cypher/shards``): for doors whose calls may run outside the bookmarks
    middleware's request scope (MCP over stdio has none; over HTTP the call runs inside it
    today, and this changes nothing). Nothing changes on one server."""
    bind_tenant(who.tenant_id)
    return who


class HarvestWake:
    """The nudge ``harvest`` gives this process's consolidator workers, and how many listen.

    A worker that found nothing to lease sleeps for ``PALIMPSEST_CONSOLIDATE_POLL_SECONDS``; a span
    banked on this server meanwhile wakes it at once, so a quiet server turns a harvested turn
    into memory within about a second instead of a poll later. Spans banked on another replica
    are found on the poll (leases keep the replicas apart either way).

    The nudge is a counter, not a flag: a worker remembers the count it saw before it looked
    for work, and a harvest that landed while it was busy (after the look, before the sleep)
    ends the sleep before it starts. Nothing here is shared between processes or threads: the
    workers and the resolvers run on the server's one event loop.
    """

    def __init__(self) -> None:
        self._count = 0
        self._changed: asyncio.Event | None = None  # made by the first waiter, on its loop
        self.workers = 0  # consolidator workers running in this process

    @property
    def count(self) -> int:
        """Harvests notified so far: what a worker remembers before it looks for work."""
        return self._count

    def notify(self) -> None:
        """Spans were banked: wake every worker waiting now, and any about to wait."""
        self._count += 1
        if self._changed is not None:
            self._changed.set()
            self._changed = None  # later waiters wait for the next harvest

    async def wait(self, seen: int) -> None:
        """Return once a harvest was notified after the count ``seen`` (at once if one was)."""
        while self._count == seen:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()


@dataclass(frozen=True, slots=True)
class Services:
    db: Database
    embedder: Embedder
    settings: Settings
    sql: SqlStore
    clock: Callable[[], datetime] = field(default=utc_now)
    questions: QueryVectors | None = None
    # Brings the process's view of the embedding state up to date before a stored vector is
    # made (``resolvers.reembed.Follower.fresh``): a write made after a migration started
    # carries the target model's vector too.
    embedding_state: Callable[[], Awaitable[None]] | None = None
    # Where work proportional to a request's size runs (off the loop); inline by default, for
    # unit tests: the server and the harnesses get the worker pool (runtime.open_services).
    offload: Offload = field(default_factory=Offload.inline)
    # Harvest wakes this process's consolidator workers (``palimpsest serve`` runs them).
    wake: HarvestWake = field(default_factory=HarvestWake)
    # Which engine answers the full-text legs (``cypher/extension.py``), chosen at start-up.
    search_engine: SearchEngine = CYPHER
    # Asks the operator's model about pairs of close facts (``judgeConflicts``); None when no
    # model is configured or judging is off. The consolidator's workers are given their own.
    judge: Judge | None = None

    async def embed(self, texts: Sequence[str], *, stored: bool = True) -> list[Vector]:
        """Embed off the event loop: the model is CPU-bound. Vectors to be ``stored`` are
        made with the target model too while a migration builds (``ActiveEmbedder``)."""
        embedder = self.embedder
        if stored and self.embedding_state is not None:
            await self.embedding_state()
        if stored and isinstance(embedder, ActiveEmbedder):
            return await anyio.to_thread.run_sync(embedder.embed_rows, list(texts))
        return await anyio.to_thread.run_sync(embedder.embed, list(texts))

    async def _embed_question(self, text: str) -> list[Vector]:
        """With the model's query prefix, for a model that has one (e5)."""
        return await anyio.to_thread.run_sync(embed_queries, self.embedder, [text])

    async def embed_question(self, who: Principal, text: str) -> Vector:
        """A recall question's vector; the same caller asking the same words again is
        answered from its own recent questions, without a model run."""
        if self.questions is None:
            return (await self._embed_question(text))[0]
        # The model too: after a cutover (resolvers/reembed.py) the old vectors are no use.
        model = self.embedder.model_name
        caller = "\x1f".join((model, who.tenant_id, who.user_id or "", who.agent_name or ""))
        known = self.questions.get(caller, text)
        if known is None:
            known = (await self._embed_question(text))[0]
            self.questions.put(caller, text, known)
        return known
