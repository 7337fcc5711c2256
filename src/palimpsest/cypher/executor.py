"""The one execution path to Neo4j.

Every statement is a named ``Statement`` constant from a ``cypher/`` module, run with
``$parameters`` only. Logs carry the statement name and parameter *keys*, never values.
Driver exceptions are translated here into the error tree.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC
from typing import Any, LiteralString, TypeVar

import neo4j
from neo4j import AsyncDriver, AsyncManagedTransaction
from neo4j.exceptions import ConstraintError, Neo4jError, ServiceUnavailable, SessionExpired
from neo4j.time import DateTime
from prometheus_client import Histogram

from palimpsest.errors import Conflict, Unavailable

log = logging.getLogger(__name__)
T = TypeVar("T")
Row = dict[str, Any]

CYPHER_SECONDS = Histogram(
    "palimpsest_cypher_seconds", "Time spent in one Cypher statement", ["statement"]
)


@dataclass(frozen=True, slots=True)
class Statement:
    """A named Cypher statement; ``text`` is a literal so no value can be formatted into it."""

    name: str
    text: LiteralString


class Tx:
    """One transaction; ``run`` is the only way statements reach the server."""

    def __init__(self, tx: AsyncManagedTransaction) -> None:
        self._tx = tx

    async def run(self, statement: Statement, params: Mapping[str, Any] | None = None) -> list[Row]:
        args = dict(params or {})
        log.debug("cypher %s params=%s", statement.name, sorted(args))
        started = time.perf_counter()
        try:
            result = await self._tx.run(statement.text, args)
            rows = [_native(record) for record in await result.fetch(2**31 - 1)]
        finally:
            CYPHER_SECONDS.labels(statement.name).observe(time.perf_counter() - started)
        return rows


class Database:
    def __init__(self, driver: AsyncDriver, database: str) -> None:
        self.driver = driver
        self.database = database

    async def read(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        return await self.read_tx(lambda tx: tx.run(statement, params))

    async def write(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        return await self.write_tx(lambda tx: tx.run(statement, params))

    async def read_tx(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        return await self._execute(work, write=False)

    async def write_tx(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """Run ``work`` in one write transaction, retried by the driver on transient errors."""
        return await self._execute(work, write=True)

    async def _execute(self, work: Callable[[Tx], Awaitable[T]], *, write: bool) -> T:
        async def unit(tx: AsyncManagedTransaction) -> T:
            return await work(Tx(tx))

        try:
            async with self.driver.session(database=self.database) as session:
                if write:
                    return await session.execute_write(unit)
                return await session.execute_read(unit)
        except ConstraintError as e:
            raise Conflict("the write collides with an existing row") from e
        except (ServiceUnavailable, SessionExpired) as e:
            raise Unavailable("the database is not reachable; retry shortly") from e
        except Neo4jError as e:
            # Translate by code, never by message text; the message may quote parameters.
            log.error("neo4j error code=%s", e.code)
            raise


def _native(record: neo4j.Record) -> Row:
    return {k: _convert(v) for k, v in record.data().items()}


def _convert(value: Any) -> Any:
    """Driver temporal values become ``datetime``, also inside map projections."""
    if isinstance(value, DateTime):
        # Fixed-offset UTC: a named "UTC" zone written back would compare as a different,
        # later instant than the same moment with offset Z, breaking half-open intervals.
        return value.to_native().astimezone(UTC)
    if isinstance(value, dict):
        return {k: _convert(v) for k, v in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], (dict, DateTime)):
        return [_convert(v) for v in value]
    return value
