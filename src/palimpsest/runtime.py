"""Open everything a resolver needs (driver, schema, embedder, SQL store) and close it again.

The app's lifespan and the benchmark and evaluation harnesses share this, so every path
that reaches the resolvers is set up the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.cypher.driver.connect import connect
from palimpsest.cypher.driver.executor import Database
from palimpsest.cypher.extension import choose_everywhere
from palimpsest.cypher.indexes import apply_schema, preflight_model
from palimpsest.cypher.shards import ShardedDatabase, connect_shards, topology
from palimpsest.embedding import QueryVectors, load_embedder
from palimpsest.embedding.models import ActiveEmbedder
from palimpsest.extraction import load_judge
from palimpsest.resolvers.reembed import Follower, use_slot
from palimpsest.resolvers.services import Services
from palimpsest.sqlmem import SqlStore
from palimpsest.sqlmem.sqlite.store import SqliteStore
from palimpsest.workers.offload import Offload


@asynccontextmanager
async def open_services(settings: Settings, dual: bool = True) -> AsyncIterator[Services]:
    """``dual``: writes during a model migration embed with both models (``reembed`` itself,
    which loads the target model for its own batches, passes False)."""
    async with open_database(settings) as db:
        state = await apply_schema(db, settings.embedding.model, settings.embedding.dimensions)
        if isinstance(db, ShardedDatabase):  # the state above is the designated shard's
            for name, shard in db.router.databases().items():
                if name != db.router.designated:
                    await apply_schema(
                        shard, settings.embedding.model, settings.embedding.dimensions
                    )
        engine = await choose_everywhere(db, settings.recall.search_engine)
        # The database's active model serves (after a cutover it may not be the configured
        # one, which must still be one the database holds); a later cutover is followed.
        use_slot(db, state.active.slot)
        loaded = await anyio.to_thread.run_sync(
            lambda: load_embedder(
                state.active.model,
                state.active.dimensions,
                settings.model_dir,
                settings.embedding.threads,
            )
        )
        embedder = ActiveEmbedder(loaded)
        follower = Follower(db, embedder, settings, dual)
        following = asyncio.create_task(follower.run())
        sql = await anyio.to_thread.run_sync(open_sql_store, settings)
        size = settings.embedding.cache_size
        questions = QueryVectors(size) if size else None
        offload = Offload.from_settings(settings)  # no process starts before it is needed
        try:
            yield Services(
                db,
                embedder,
                settings,
                sql,
                questions=questions,
                embedding_state=follower.fresh if dual else None,
                offload=offload,
                search_engine=engine,
                judge=load_judge(settings),
            )
        finally:
            offload.close()
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await following
            sql.close()


async def check_configured_model(settings: Settings) -> None:
    """Refuse, before anything is written or started, an embedding model the database does
    not hold (``cypher.indexes.check_model``): ``serve`` says it in one line instead of
    uvicorn's lifespan traceback."""
    async with open_database(settings) as db:
        await preflight_model(db, settings.embedding.model, settings.embedding.dimensions)


@asynccontextmanager
async def open_database(settings: Settings) -> AsyncIterator[Database]:
    """The configured Neo4j: the one server, or the tenant shards (``cypher/shards``) when
    ``PALIMPSEST_NEO4J_SHARDS`` lists them, their directory checked."""
    wait = settings.neo4j.bookmark_wait_seconds
    shards = topology(settings)
    if shards is not None:
        async with connect_shards(shards, settings.neo4j.database, wait) as sharded:
            yield sharded
        return
    auth = settings.neo4j_credentials()
    async with connect(settings.bolt_uri, auth, settings.neo4j.database, wait) as db:
        yield db


def open_sql_store(settings: Settings) -> SqlStore:
    """The configured SQL Memory backend, ready to use (PostgreSQL is hardened first)."""
    if settings.sql.backend == "postgres":
        from palimpsest.sqlmem.postgres.store import PostgresStore

        store = PostgresStore.from_settings(settings)
        try:
            store.prepare()
        except BaseException:
            store.close()
            raise
        return store
    return SqliteStore.from_settings(settings)
