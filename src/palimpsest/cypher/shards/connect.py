"""The shards' drivers: opened, checked and closed together."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from neo4j import AsyncGraphDatabase

from palimpsest.cypher.driver import temporal_wire
from palimpsest.cypher.driver.executor import Database, Neo4jExecutor
from palimpsest.cypher.shards.directory import Directory
from palimpsest.cypher.shards.router import ShardedDatabase, ShardRouter
from palimpsest.cypher.shards.topology import Topology


@asynccontextmanager
async def connect_shards(
    topology: Topology, database: str, bookmark_wait: float
) -> AsyncIterator[ShardedDatabase]:
    """A ``ShardedDatabase`` over every configured shard, each reachable at start-up (the
    schema is applied on each), the directory checked; every driver closed on exit."""
    temporal_wire.install()  # before the first connection opens
    async with AsyncExitStack() as stack:
        executors: dict[str, Neo4jExecutor] = {}
        for spec in topology.shards:
            driver = AsyncGraphDatabase.driver(
                spec.uri, auth=spec.auth(), notifications_min_severity="OFF"
            )
            stack.push_async_callback(driver.close)
            executors[spec.name] = Neo4jExecutor(driver, database, bookmark_wait, spec.name)
        for executor in executors.values():
            await executor.ping()
        designated = Database(executors[topology.designated])
        directory = Directory(designated, topology.names)
        await directory.prepare()
        yield ShardedDatabase(ShardRouter(executors, topology.designated, directory))
