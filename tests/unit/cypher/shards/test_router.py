"""Routing: scope-bound work on its ref's tenant's shard, unbound work on the request's
tenant's shard, GLOBAL on the designated one, and a scope of another shard refused."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.cypher.driver.causal import request_scope
from palimpsest.cypher.driver.executor import Database, Row, ScopeViolation, Statement, Tx
from palimpsest.cypher.shards import Directory, ShardedDatabase, ShardRouter
from palimpsest.cypher.shards import directory as q
from palimpsest.identity import Scope, ScopeRef
from tests.unit.principals import scope_ref
from tests.unit.recording import RecordingExecutor

READ = Statement("READ_SOMETHING", "MATCH (n {scope_key: $scope_key}) RETURN n")
# acme lives on a (the designated shard, with GLOBAL), globex on b.
PLACED = {"acme": "a", "globex": "b"}


def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
    if statement is q.LOOKUP_TENANT_SHARD:
        return [{"shard": PLACED[params["tenant"]]}] if params["tenant"] in PLACED else []
    return []


def sharded() -> tuple[ShardedDatabase, RecordingExecutor, RecordingExecutor]:
    a, b = RecordingExecutor(answer), RecordingExecutor(answer)
    directory = Directory(Database(a), ("a", "b"))
    return ShardedDatabase(ShardRouter({"a": a, "b": b}, "a", directory)), a, b


def data(recorder: RecordingExecutor) -> list[str]:
    """The scope keys a shard served (the directory's own reads left out)."""
    return [c.params["scope_key"] for c in recorder.calls if c.name == READ.name]


async def test_scope_bound_work_runs_on_its_tenants_shard() -> None:
    db, a, b = sharded()
    globex, acme = scope_ref("globex", Scope.USER, "u1"), scope_ref("acme", Scope.USER, "u2")
    await db.scoped(globex).read(READ)
    await db.scoped(acme).write(READ)
    await db.scoped(scope_ref("", Scope.GLOBAL, "")).read(READ)
    assert data(b) == [globex.scope_key]
    assert data(a) == [acme.scope_key, scope_ref("", Scope.GLOBAL, "").scope_key]


async def test_unbound_work_runs_on_the_requests_tenant_shard_else_the_designated() -> None:
    db, a, b = sharded()
    globex = scope_ref("globex", Scope.TENANT, "globex")
    with request_scope(set(), "globex"):
        await db.read_tx(lambda tx: tx.scoped(globex).run(READ))
    assert data(b) == [globex.scope_key]
    acme = scope_ref("acme", Scope.USER, "u")
    await db.read_tx(lambda tx: tx.scoped(acme).run(READ))  # outside a request: designated
    assert data(a) == [acme.scope_key]
    with pytest.raises(ScopeViolation):  # globex is not on the designated shard
        await db.read_tx(lambda tx: tx.scoped(globex).run(READ))
    assert data(a) == [acme.scope_key]


async def test_a_scope_of_another_shard_inside_a_unit_is_refused_not_run() -> None:
    db, a, b = sharded()
    glob, globex = scope_ref("", Scope.GLOBAL, ""), scope_ref("globex", Scope.USER, "u")
    await db.scoped(globex).read(READ)  # globex's shard is now known to this process

    async def both(tx: Any) -> None:
        await tx.scoped(globex).run(READ)
        await tx.scoped(glob).run(READ)

    with request_scope(set(), "globex"), pytest.raises(ScopeViolation, match="another shard"):
        await db.read_tx(both)
    assert data(a) == [], "nothing of GLOBAL ran on globex's shard or anywhere"
    assert data(b) == [globex.scope_key, globex.scope_key]


async def test_partition_groups_scopes_by_shard_in_the_order_asked() -> None:
    db, a, b = sharded()
    user, glob = scope_ref("globex", Scope.USER, "u"), scope_ref("", Scope.GLOBAL, "")
    tenant = scope_ref("globex", Scope.TENANT, "globex")
    groups = await db.partition([user, glob, tenant])
    assert [refs for _, refs in groups] == [[user, tenant], [glob]]
    for handle, refs in groups:
        first = refs[0]

        async def one(tx: Tx, ref: ScopeRef = first) -> list[Row]:
            return await tx.scoped(ref).run(READ)

        await handle.read_tx(one)
    assert data(b) == [user.scope_key]
    assert data(a) == [glob.scope_key]
    acme = [scope_ref("acme", Scope.USER, "u"), glob]
    assert [refs for _, refs in await db.partition(acme)] == [acme], "both on a: one group"


async def test_one_server_is_one_group() -> None:
    db = Database(RecordingExecutor(answer))
    refs = [scope_ref("acme", Scope.USER, "u"), scope_ref("", Scope.GLOBAL, "")]
    assert await db.partition(refs) == [(db, refs)]


async def test_everywhere_is_one_handle_per_shard_each_refusing_other_shards_scopes() -> None:
    db, a, b = sharded()
    on_a, on_b = db.everywhere()
    globex, acme = scope_ref("globex", Scope.USER, "u"), scope_ref("acme", Scope.USER, "u")
    await on_b.read_tx(lambda tx: tx.scoped(globex).run(READ))
    await on_a.write_tx(lambda tx: tx.scoped(acme).run(READ))
    assert data(b) == [globex.scope_key]
    assert data(a) == [acme.scope_key]
    with pytest.raises(ScopeViolation):
        await on_a.read_tx(lambda tx: tx.scoped(globex).run(READ))
    assert data(a) == [acme.scope_key]
    one = Database(RecordingExecutor(answer))
    assert one.everywhere() == [one]
