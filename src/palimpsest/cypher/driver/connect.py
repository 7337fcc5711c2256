"""The driver's life: opened, checked and closed here, so nothing above ``cypher/`` touches
the ``neo4j`` package."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from neo4j import AsyncGraphDatabase

from palimpsest.cypher.driver import temporal_wire
from palimpsest.cypher.driver.executor import Database, Neo4jExecutor


@asynccontextmanager
async def connect(
    uri: str, auth: tuple[str, str], database: str, bookmark_wait: float
) -> AsyncIterator[Database]:
    """A ``Database`` on a reachable server (``Unavailable`` if it is not), closed on exit."""
    temporal_wire.install()  # before the first connection opens
    # Server notifications (e.g. "property not seen yet") would log whole query texts.
    driver = AsyncGraphDatabase.driver(uri, auth=auth, notifications_min_severity="OFF")
    try:
        executor = Neo4jExecutor(driver, database, bookmark_wait)
        await executor.ping()
        yield Database(executor)
    finally:
        await driver.close()
