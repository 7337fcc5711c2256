"""The transport on the real Neo4j: reads run as auto-commit (implicit) transactions, the
BEGIN and COMMIT round trips fewer than a managed one; writes stay in one managed
transaction."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

import pytest
from neo4j._async.io._bolt._base import AsyncBolt

from palimpsest.cypher.driver.executor import (
    CrossScopeStatement,
    Database,
    Neo4jExecutor,
    OneTransaction,
    RawRun,
    Row,
    Tx,
)
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


WRITE_PROBE = CrossScopeStatement(
    "TEST_ONE_TX_WRITE", "CREATE (p:OneTxProbe {tag: $tag}) RETURN p.tag AS tag"
)
READ_PROBE = CrossScopeStatement(
    "TEST_ONE_TX_READ", "MATCH (p:OneTxProbe {tag: $tag}) RETURN count(p) AS n"
)


async def test_one_transaction_shows_its_writes_to_later_units_and_keeps_none(
    svc: Services,
) -> None:
    executor = svc.db.executor
    assert isinstance(executor, Neo4jExecutor)
    tag = secrets.token_hex(8)
    async with OneTransaction(executor) as one:
        db = Database(one)
        await db.write(WRITE_PROBE, {"tag": tag})
        await db.write(WRITE_PROBE, {"tag": tag})
        # A later unit, a read, sees both writes of the block: they share its transaction.
        assert await db.read(READ_PROBE, {"tag": tag}) == [{"n": 2}]
        # Units started at once run one after the other on the one transaction.
        counts = await asyncio.gather(*(db.read(READ_PROBE, {"tag": tag}) for _ in range(4)))
        assert counts == [[{"n": 2}]] * 4
    assert await svc.db.read(READ_PROBE, {"tag": tag}) == [{"n": 0}]
    with pytest.raises(RuntimeError, match="outside its block"):
        await Database(one).read(READ_PROBE, {"tag": tag})
