"""The database handles enforce isolation by their shape: scoped statements need a ScopeRef,
the ref's parameters are injected and cannot be overridden, and only resolve_scope makes refs."""

from __future__ import annotations

from pathlib import Path

import pytest
from neo4j.exceptions import ClientError, SessionExpired, TransientError

from palimpsest.cypher import memory as mq
from palimpsest.cypher import schema as sq
from palimpsest.cypher.driver.executor import (
    CrossScopeStatement,
    Database,
    Neo4jExecutor,
    Row,
    ScopedTx,
    ScopeViolation,
    Tx,
)
from palimpsest.errors import DatabaseFailure, Unavailable
from palimpsest.identity import Scope, ScopeRef, resolve_scope
from palimpsest.identity.scopes import scope_key
from tests.unit.principals import principal
from tests.unit.recording import services

ALICE = resolve_scope(principal(), Scope.USER)
TEAM = resolve_scope(principal(), Scope.TENANT)


def test_a_scope_ref_cannot_be_made_by_hand() -> None:
    with pytest.raises(TypeError, match="resolve_scope"):
        ScopeRef("acme", Scope.USER, "bob", scope_key("acme", Scope.USER, "bob"))


async def test_the_unbound_handle_refuses_scoped_statements(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    with pytest.raises(ScopeViolation, match="GET_MEMORY is scoped"):
        await svc.db.read(mq.GET_MEMORY, {"key": "k", "now": None})
    assert recorder.calls == []


async def test_a_scoped_handle_refuses_unscoped_statements(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    with pytest.raises(ScopeViolation, match="unscoped"):
        await svc.db.scoped(ALICE).read(sq.LIST_INDEXES)
    assert recorder.calls == []


@pytest.mark.parametrize("name", ["scope_key", "tenant_id", "owner_id", "scope"])
async def test_scope_parameters_cannot_be_overridden(tmp_path: Path, name: str) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    with pytest.raises(ScopeViolation, match="come from the ScopeRef"):
        await svc.db.scoped(ALICE).read(mq.GET_MEMORY, {"key": "k", name: "other"})
    assert recorder.calls == []


async def test_the_handle_injects_the_resolved_scope(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    await svc.db.scoped(ALICE).read(mq.GET_MEMORY, {"key": "k", "now": None})
    [call] = recorder.calls
    assert call.params["scope_key"] == scope_key("acme", Scope.USER, "alice")
    assert (call.params["tenant_id"], call.params["owner_id"]) == ("acme", "alice")
    assert call.params["scope"] == "USER"
    assert call.write is False


async def test_one_transaction_can_reach_several_scopes_each_bound(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)

    async def work(tx: Tx) -> None:
        for ref in (ALICE, TEAM):
            scoped: ScopedTx = tx.scoped(ref)
            await scoped.run(mq.GET_MEMORY, {"key": "k", "now": None})
        with pytest.raises(ScopeViolation):
            await tx.run(mq.GET_MEMORY, {"key": "k", "now": None})

    await svc.db.write_tx(work)
    keys = [c.params["scope_key"] for c in recorder.calls]
    assert keys == [scope_key("acme", Scope.USER, "alice"), scope_key("acme", Scope.TENANT, "acme")]
    assert all(c.write for c in recorder.calls)


class _Record:
    def keys(self) -> list[str]:
        return ["one"]

    def values(self) -> list[int]:
        return [1]


class _Result:
    async def fetch(self, n: int) -> list[_Record]:
        return [_Record()]


class _FlakySession:
    """A session whose first ``fails`` auto-commit runs raise ``error`` (or the runs
    numbered in ``at``, counting from 1)."""

    def __init__(self, error: Exception, fails: int = 0, at: frozenset[int] = frozenset()) -> None:
        self.error, self.fails, self.at, self.runs = error, fails, at, 0

    async def __aenter__(self) -> _FlakySession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def run(self, text: str, args: dict[str, object]) -> _Result:
        self.runs += 1
        if self.runs <= self.fails or self.runs in self.at:
            raise self.error
        return _Result()


class _Driver:
    def __init__(self, session: _FlakySession) -> None:
        self.session_ = session

    def session(self, **config: object) -> _FlakySession:
        assert config["default_access_mode"] == "READ"
        return self.session_


ONE = CrossScopeStatement("TEST_ONE", "RETURN 1 AS one")


@pytest.mark.parametrize("error", [TransientError("busy"), SessionExpired("moved")])
async def test_a_single_read_is_retried_on_transient_errors(error: Exception) -> None:
    session = _FlakySession(error, fails=2)
    db = Database(Neo4jExecutor(_Driver(session), "neo4j"))  # type: ignore[arg-type]
    assert await db.read(ONE) == [{"one": 1}]
    assert session.runs == 3


async def test_a_single_read_gives_up_after_three_tries_and_at_once_on_client_errors() -> None:
    session = _FlakySession(TransientError("busy"), fails=3)
    db = Database(Neo4jExecutor(_Driver(session), "neo4j"))  # type: ignore[arg-type]
    with pytest.raises(Unavailable, match="busy"):
        await db.read(ONE)
    assert session.runs == 3
    session = _FlakySession(ClientError("bad"), fails=1)
    db = Database(Neo4jExecutor(_Driver(session), "neo4j"))  # type: ignore[arg-type]
    with pytest.raises(DatabaseFailure) as failed:
        await db.read(ONE)
    assert session.runs == 1
    assert failed.value.details == {"driverCode": ClientError("bad").code}


async def test_a_read_of_several_statements_is_retried_from_its_first() -> None:
    """Reads run as auto-commit statements: a transient error in the second one runs the
    whole read again, as a managed transaction would be."""
    session = _FlakySession(TransientError("busy"), at=frozenset({2}))
    db = Database(Neo4jExecutor(_Driver(session), "neo4j"))  # type: ignore[arg-type]
    attempts: list[int] = []

    async def work(tx: Tx) -> list[Row]:
        attempts.append(session.runs)
        return [*await tx.run(ONE), *await tx.run(ONE)]

    assert await db.read_tx(work) == [{"one": 1}, {"one": 1}]
    assert attempts == [0, 2]  # the second attempt started after the failed second run
    assert session.runs == 4
