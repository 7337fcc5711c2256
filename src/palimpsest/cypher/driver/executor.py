"""The one execution path to Neo4j, with isolation built into its shape.

Every statement is a named ``Statement`` constant from a ``cypher/`` module, run with
``$parameters`` only. A statement is *scoped* (the default) when it reads or writes rows of a
scope; such a statement runs only through a handle bound to a ``ScopeRef`` (``db.scoped(ref)``
or ``tx.scoped(ref)``), which injects ``$scope_key`` and the other scope parameters itself and
refuses callers that try to pass them. The unbound handle runs only unscoped statements
(schema DDL, the schema record). So a resolver cannot reach a row without a ``ScopeRef``, and
only ``identity.resolve_scope`` makes those.

Logs carry the statement name and parameter *keys*, never values. Driver exceptions are
translated into the error tree (``driver_errors``). The transport is an ``Executor``; tests
substitute a recording one to exercise resolvers without a server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, LiteralString, Protocol, TypeVar

from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    AsyncDriver,
    AsyncManagedTransaction,
    AsyncSession,
    AsyncTransaction,
    Bookmarks,
)
from neo4j.exceptions import DriverError, Neo4jError
from prometheus_client import Histogram

from palimpsest.cypher.driver.causal import Causal
from palimpsest.cypher.driver.causal import current as causal_scope
from palimpsest.cypher.driver.errors import BOOKMARK_TIMEOUT, code_of, translated, unreached
from palimpsest.cypher.driver.quiet_params import quiet
from palimpsest.cypher.driver.records import Row as Row  # the rows every statement returns
from palimpsest.cypher.driver.records import native
from palimpsest.cypher.slots import Slot, names_dual, params_on, text_on
from palimpsest.identity import ScopeRef

log = logging.getLogger(__name__)
T = TypeVar("T")
# The parameters only a scope-bound handle may set.
SCOPE_PARAMS = frozenset({"tenant_id", "scope", "owner_id", "scope_key"})

CYPHER_SECONDS = Histogram(
    "palimpsest_cypher_seconds", "Time spent in one Cypher statement", ["statement"]
)


class ScopeViolation(RuntimeError):
    """A programming error: a statement ran through the wrong kind of handle."""


@dataclass(frozen=True, slots=True)
class Statement:
    """A named Cypher statement; ``text`` is a literal so no value can be formatted into it.

    A ``Statement`` is always scoped: it runs only through a handle bound to a ``ScopeRef``.
    The only unscoped kinds are ``SchemaStatement`` (made in ``cypher/schema.py``) and
    ``CrossScopeStatement`` (``cypher/queue.py`` and the bookmark wait below); there is no
    argument that unscopes a statement, and ``tests/unit/cypher/test_unscoped.py`` fails on
    any other module that makes one.
    """

    name: str
    text: LiteralString

    @property
    def scoped(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class SchemaStatement(Statement):
    """DDL, index listings and the schema record: they touch no scoped row."""

    @property
    def scoped(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class CrossScopeStatement(Statement):
    """A read across scopes that returns scope ids and counts, never content."""

    @property
    def scoped(self) -> bool:
        return False


RawRun = Callable[[Statement, dict[str, Any]], Awaitable[list[Row]]]


class Executor(Protocol):
    """Runs ``work``, which gets a function that runs one statement: a write in one
    transaction; a read as auto-commit statements in one session (retried as a whole).
    ``single``: ``work`` runs exactly one read statement."""

    async def execute(
        self, work: Callable[[RawRun], Awaitable[T]], *, write: bool, single: bool = False
    ) -> T: ...

    async def ping(self) -> None: ...


class Tx:
    """One transaction. Runs unscoped statements; ``scoped(ref)`` binds it to a scope."""

    def __init__(self, run: RawRun) -> None:
        self._run = run

    async def run(self, statement: Statement, params: Mapping[str, Any] | None = None) -> list[Row]:
        if statement.scoped:
            raise ScopeViolation(f"{statement.name} is scoped: run it through tx.scoped(ref)")
        return await self._run(statement, dict(params or {}))

    def scoped(self, ref: ScopeRef) -> ScopedTx:
        return ScopedTx(self._run, ref)


class ScopedTx:
    """A transaction bound to one scope: every statement gets that scope's parameters."""

    def __init__(self, run: RawRun, ref: ScopeRef) -> None:
        if not isinstance(ref, ScopeRef):
            raise ScopeViolation("a scoped handle needs a ScopeRef from resolve_scope")
        self._run = run
        self.ref = ref

    async def run(self, statement: Statement, params: Mapping[str, Any] | None = None) -> list[Row]:
        if not statement.scoped:
            raise ScopeViolation(f"{statement.name} is unscoped: run it through the database")
        args = dict(params or {})
        if overridden := SCOPE_PARAMS & args.keys():
            raise ScopeViolation(f"{statement.name}: {sorted(overridden)} come from the ScopeRef")
        return await self._run(statement, {**args, **self.ref.params()})


class ScopedDatabase:
    """``Database`` bound to one scope; what resolvers use for single-scope work."""

    def __init__(self, executor: Executor, ref: ScopeRef) -> None:
        self._executor = executor
        self.ref = ref

    async def read(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        return await self._executor.execute(
            lambda run: ScopedTx(run, self.ref).run(statement, params), write=False, single=True
        )

    async def write(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        return await self.write_tx(lambda tx: tx.run(statement, params))

    async def read_tx(self, work: Callable[[ScopedTx], Awaitable[T]]) -> T:
        return await self._executor.execute(lambda run: work(ScopedTx(run, self.ref)), write=False)

    async def write_tx(self, work: Callable[[ScopedTx], Awaitable[T]]) -> T:
        """Run ``work`` in one write transaction, retried by the driver on transient errors."""
        return await self._executor.execute(lambda run: work(ScopedTx(run, self.ref)), write=True)


class Database:
    """The unbound handle: unscoped statements, and transactions spanning several scopes."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def scoped(self, ref: ScopeRef) -> ScopedDatabase:
        return ScopedDatabase(self.executor, ref)

    async def read(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        return await self.executor.execute(
            lambda run: Tx(run).run(statement, params), write=False, single=True
        )

    async def write(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        return await self.write_tx(lambda tx: tx.run(statement, params))

    async def read_tx(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        return await self.executor.execute(lambda run: work(Tx(run)), write=False)

    async def write_tx(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """One write transaction; ``tx.scoped(ref)`` reaches each scope it writes."""
        return await self.executor.execute(lambda run: work(Tx(run)), write=True)

    async def ping(self) -> None:
        await self.executor.ping()

    async def partition(self, refs: Sequence[ScopeRef]) -> list[tuple[Database, list[ScopeRef]]]:
        """``refs`` grouped by the server that holds them, each group with a handle on its
        server. One server here; a database of tenant shards (``cypher/shards``) splits them,
        so a read across scopes asks each shard for its own (``resolvers/recall/planner``)."""
        return [(self, list(refs))]

    def everywhere(self) -> list[Database]:
        """One handle per server, for a job that passes over all of them (the consolidator's
        leases): this one here; one per shard with tenant shards (``cypher/shards``)."""
        return [self]


_AUTO_COMMIT_TRIES = 3  # read work on transient errors, as the driver retries transactions

# Run first, in the request's session, when the client sent bookmarks: the wait for them is
# bounded here, before any work (and its retries) could wait again.
AWAIT_BOOKMARKS = CrossScopeStatement("AWAIT_BOOKMARKS", "RETURN 1 AS reached")


class Neo4jExecutor:
    """The real transport: managed transactions on the driver, errors translated by code."""

    def __init__(
        self,
        driver: AsyncDriver,
        database: str,
        bookmark_wait: float = 2.0,
        shard: str | None = None,
    ) -> None:
        self.driver = driver
        self.database = database
        self.bookmark_wait = bookmark_wait
        # The shard's name when the deployment has tenant shards (cypher/shards): its
        # bookmarks are kept apart from the other shards'. None: the one server.
        self.shard = shard
        # The active embedding slot (cypher/slots.py), set from the schema record; one unit
        # of work runs on the slot it started with.
        self.slot: Slot = "a"
        # During a migration (not ``steady``): split writes' DualVectors between the slots.
        self.dual = False

    async def execute(
        self, work: Callable[[RawRun], Awaitable[T]], *, write: bool, single: bool = False
    ) -> T:
        slot, dual = self.slot, self.dual

        async def unit(tx: AsyncManagedTransaction) -> T:
            return await work(lambda statement, params: _run(tx, statement, params, slot, dual))

        async def auto_commit(session: AsyncSession) -> T:
            # Reads need no explicit transaction: Neo4j reads at read-committed isolation, so
            # statements of one transaction see no more consistent a state than auto-commit
            # ones in one session (which also chains them causally). Each saves the BEGIN and
            # COMMIT round trips, each a send and a wait on the loopback that a short read
            # would otherwise spend most of its time on (docs/notes/load.md). The whole work
            # is retried, like a managed transaction.
            ran = False

            async def once(statement: Statement, params: dict[str, Any]) -> list[Row]:
                nonlocal ran
                if ran and single:
                    raise RuntimeError("a single-statement read ran a second statement")
                ran = True
                return await _run(session, statement, params, slot, dual)

            for attempt in range(_AUTO_COMMIT_TRIES):
                ran = False
                try:
                    return await work(once)
                except (Neo4jError, DriverError) as e:
                    last = attempt + 1 == _AUTO_COMMIT_TRIES
                    if last or not e.is_retryable() or code_of(e) == BOOKMARK_TIMEOUT:
                        raise
                await asyncio.sleep(0.05 * 4**attempt)
            raise AssertionError("unreachable")

        # Read-your-writes across replicas (causal.py): start after the request's bookmarks,
        # and hand the new ones back. The access mode routes the transaction on a cluster:
        # writes to the leader, reads to a follower or read replica.
        causal = causal_scope()
        shard = self.shard
        used = causal.given_to(shard) if causal else frozenset()
        try:
            async with self.driver.session(
                database=self.database,
                bookmarks=Bookmarks.from_raw_values(used) if used else None,
                default_access_mode=WRITE_ACCESS if write else READ_ACCESS,
            ) as session:
                if causal is not None and causal.awaits(shard):
                    await self._reach(session, causal, used)
                    used = causal.given_to(shard)
                if write:
                    result = await _write_pipelined(session, unit)
                else:
                    result = await auto_commit(session)
                if causal is not None:
                    causal.after(used, (await session.last_bookmarks()).raw_values, shard)
                return result
        except (Neo4jError, DriverError) as e:
            raise translated(e) from e

    async def _reach(self, session: AsyncSession, causal: Causal, given: frozenset[str]) -> None:
        """Wait at most ``bookmark_wait`` seconds for the database to reach the client's
        bookmarks: past that the request is refused, whatever the server's own limit."""
        try:
            async with asyncio.timeout(self.bookmark_wait):
                await _run(session, AWAIT_BOOKMARKS, {})
        except TimeoutError as e:
            raise unreached() from e
        causal.after(given, (await session.last_bookmarks()).raw_values, self.shard)

    async def ping(self) -> None:
        try:
            await self.driver.verify_connectivity()
        except (Neo4jError, DriverError) as e:
            raise translated(e) from e


class Rehearsal:
    """Runs every unit of work for real in one explicit transaction, then rolls it back: the
    database plans and executes each statement with the parameters a real call sends, and
    keeps nothing (start-up's warm-up rehearses the common writes this way)."""

    def __init__(self, real: Neo4jExecutor) -> None:
        self.real = real

    async def execute(
        self, work: Callable[[RawRun], Awaitable[T]], *, write: bool, single: bool = False
    ) -> T:
        real = self.real
        slot, dual = real.slot, real.dual
        try:
            async with real.driver.session(
                database=real.database, default_access_mode=WRITE_ACCESS
            ) as session:
                tx = await session.begin_transaction()
                try:
                    return await work(lambda s, params: _run(tx, s, params, slot, dual))
                finally:
                    await tx.rollback()
        except (Neo4jError, DriverError) as e:
            raise translated(e) from e

    async def ping(self) -> None:
        await self.real.ping()


class OneTransaction:
    """Every unit of work of a block in one explicit transaction, rolled back at the block's
    end: later units see what earlier ones wrote, and the database keeps none of it (the
    warm-up's drive runs whole rounds of writes and reads this way). Units are serialised,
    since one transaction runs one statement at a time."""

    def __init__(self, real: Neo4jExecutor) -> None:
        self.real = real
        self._lock = asyncio.Lock()
        self._session: AsyncSession | None = None
        self._tx: AsyncTransaction | None = None

    async def __aenter__(self) -> OneTransaction:
        real = self.real
        try:
            self._session = real.driver.session(
                database=real.database, default_access_mode=WRITE_ACCESS
            )
            self._tx = await self._session.begin_transaction()
        except (Neo4jError, DriverError) as e:
            await self._close()
            raise translated(e) from e
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._close()

    async def _close(self) -> None:
        try:
            if self._tx is not None:
                await self._tx.rollback()
        except (Neo4jError, DriverError):
            pass  # a failed transaction is gone already: nothing of it was kept
        finally:
            self._tx = None
            if self._session is not None:
                await self._session.close()
                self._session = None

    async def execute(
        self, work: Callable[[RawRun], Awaitable[T]], *, write: bool, single: bool = False
    ) -> T:
        tx = self._tx
        if tx is None:
            raise RuntimeError("OneTransaction used outside its block")
        slot, dual = self.real.slot, self.real.dual
        async with self._lock:
            try:
                return await work(lambda s, params: _run(tx, s, params, slot, dual))
            except (Neo4jError, DriverError) as e:
                raise translated(e) from e

    async def ping(self) -> None:
        await self.real.ping()


async def _write_pipelined(
    session: AsyncSession, unit: Callable[[AsyncManagedTransaction], Awaitable[T]]
) -> T:
    """A managed write transaction whose BEGIN goes out with its first statement.

    The driver otherwise sends BEGIN alone and waits for its reply: one socket write and
    one wake-up more per write transaction on both sides (a loopback send is a large part of
    the API's CPU on this VM). ``driver.execute_query`` pipelines its BEGIN the same way
    (the session's ``_pipelined_begin``, private to the driver: without it, or with
    ``PIPELINE_BEGIN`` off, the BEGIN is sent alone as before). A failed BEGIN (a bookmark
    the server does not know) then fails the first statement with the same error code."""
    pipelined = getattr(session, "_pipelined_begin", None) if PIPELINE_BEGIN else None
    if pipelined is None:
        return await session.execute_write(unit)
    with pipelined:
        return await session.execute_write(unit)


# Off only to measure what the pipelined BEGIN saves (a bench's A/B).
PIPELINE_BEGIN = True


async def _run(
    tx: AsyncManagedTransaction | AsyncTransaction | AsyncSession,
    statement: Statement,
    args: dict[str, Any],
    slot: Slot = "a",
    dual: bool = False,
) -> list[Row]:
    log.debug("cypher %s params=%s", statement.name, sorted(args))
    started = time.perf_counter()
    text = statement.text
    if statement.scoped and (slot != "a" or dual):
        args = params_on(args, slot, dual, dual and names_dual(text))
        text = text_on(text, slot)
    try:
        result = await tx.run(text, quiet(args))
        return [native(record) for record in await result.fetch(2**31 - 1)]
    finally:
        CYPHER_SECONDS.labels(statement.name).observe(time.perf_counter() - started)
