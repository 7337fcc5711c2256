"""The transport on the real Neo4j: reads run as auto-commit (implicit) transactions, the
BEGIN and COMMIT round trips fewer than a managed one; writes stay in one managed
transaction."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from neo4j._async.io._bolt._base import AsyncBolt

from palimpsest.cypher.executor import CrossScopeStatement, Database, RawRun, Row, Tx
from palimpsest.errors import DatabaseFailure
from palimpsest.resolvers.services import Services

# Neo4j runs CALL { ... } IN TRANSACTIONS only in an implicit transaction: the statement
# itself tells which kind of transaction ran it.
IMPLICIT_ONLY = CrossScopeStatement(
    "TEST_IMPLICIT_ONLY", "CALL () { RETURN 1 AS one } IN TRANSACTIONS RETURN one"
)
ONE = CrossScopeStatement("TEST_ONE", "RETURN 1 AS one")


async def test_reads_are_implicit_transactions_and_writes_are_not(svc: Services) -> None:
    db: Database = svc.db
    assert await db.read(IMPLICIT_ONLY) == [{"one": 1}]

    async def twice(tx: Tx) -> list[Row]:
        return [*await tx.run(IMPLICIT_ONLY), *await tx.run(IMPLICIT_ONLY)]

    assert await db.read_tx(twice) == [{"one": 1}, {"one": 1}]
    with pytest.raises(DatabaseFailure) as failed:
        await db.write_tx(lambda tx: tx.run(IMPLICIT_ONLY))
    # Neo4j refuses CALL { } IN TRANSACTIONS in an explicit transaction with this code.
    assert failed.value.details["driverCode"].startswith("Neo.")


async def test_a_single_read_runs_one_statement_only(svc: Services) -> None:
    async def twice(run: RawRun) -> list[Row]:
        await run(ONE, {})
        return await run(ONE, {})

    with pytest.raises(RuntimeError, match="second statement"):
        await svc.db.executor.execute(twice, write=False, single=True)
    assert await svc.db.read_tx(lambda tx: tx.run(ONE)) == [{"one": 1}]


async def test_a_write_transaction_sends_its_begin_with_its_first_statement(
    svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two socket flushes for a one-statement write (BEGIN with RUN and PULL, then COMMIT),
    not three (BEGIN alone first), and the transaction still writes and commits."""
    await svc.db.write_tx(lambda tx: tx.run(ONE))  # a pooled connection (no HELLO to count)
    flushes = 0
    send_all: Callable[[AsyncBolt], Awaitable[None]] = AsyncBolt.send_all

    async def counted(self: AsyncBolt) -> None:
        nonlocal flushes
        flushes += 1
        await send_all(self)

    monkeypatch.setattr(AsyncBolt, "send_all", counted)
    assert await svc.db.write_tx(lambda tx: tx.run(ONE)) == [{"one": 1}]
    assert flushes == 2

    async def twice(tx: Tx) -> list[Row]:
        return [*await tx.run(ONE), *await tx.run(ONE)]

    flushes = 0
    assert await svc.db.write_tx(twice) == [{"one": 1}, {"one": 1}]
    assert flushes == 3
