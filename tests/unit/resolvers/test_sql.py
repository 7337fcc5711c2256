"""SQL Memory's admin views (``resolvers.sql``) over a scripted store: who lists and erases
which databases. A database outside the caller's view answers like one that does not exist,
and a refusal erases nothing."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from palimpsest.errors import Forbidden, InvalidArgument, NotFound
from palimpsest.identity import Role, Scope
from palimpsest.resolvers import sql
from palimpsest.resolvers.services import Services
from palimpsest.sqlmem import DatabaseInfo
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def db(key: str, tenant: str | None, scope: Scope | None) -> DatabaseInfo:
    return DatabaseInfo(key, tenant, scope, "o", 10, NOW)


DATABASES = [
    db("a1", "acme", Scope.USER),
    db("a2", "acme", Scope.TENANT),
    db("a3", "acme", Scope.GLOBAL),
    db("b1", "beta", Scope.USER),
    db("x1", None, None),  # a file without an owner record
]


@dataclass
class Store:
    erased: list[str] = field(default_factory=list)

    async def databases(self) -> list[DatabaseInfo]:
        return list(DATABASES)

    async def erase(self, key: str) -> int | None:
        self.erased.append(key)
        return 10


def with_store(tmp_path: Path) -> tuple[Services, Store]:
    svc, _ = services(lambda statement, params: [], tmp_path)
    store = Store()
    return replace(svc, sql=store), store  # type: ignore[arg-type]  # only what sql.py calls


ADMIN = principal(roles=frozenset({Role.ADMIN}))
OPERATOR = principal(roles=frozenset({Role.OPERATOR}), agent_name=None)


async def keys(svc: Services, who: Any, view: Scope) -> list[str]:
    page = await sql.databases(svc, who, view, 100, None)
    return [d.key for d in page.items]


async def test_a_tenant_admin_sees_its_own_tenants_owned_databases_only(tmp_path: Path) -> None:
    svc, _ = with_store(tmp_path)
    assert await keys(svc, ADMIN, Scope.TENANT) == ["a1", "a2"]
    with pytest.raises(Forbidden):
        await keys(svc, ADMIN, Scope.GLOBAL)  # a tenant admin never reaches other tenants


async def test_only_the_operator_sees_every_database(tmp_path: Path) -> None:
    svc, _ = with_store(tmp_path)
    assert await keys(svc, OPERATOR, Scope.GLOBAL) == ["a1", "a2", "a3", "b1", "x1"]


@pytest.mark.parametrize(
    ("who", "refusal"),
    [
        (principal(), Forbidden),
        (replace(ADMIN, isolated=True), Forbidden),
    ],
)
async def test_members_and_isolated_admins_list_nothing(
    tmp_path: Path, who: Any, refusal: type[Exception]
) -> None:
    svc, store = with_store(tmp_path)
    with pytest.raises(refusal):
        await keys(svc, who, Scope.TENANT)
    with pytest.raises(refusal):
        await sql.erase(svc, who, "a1", Scope.TENANT)
    assert store.erased == []


async def test_a_view_is_tenant_or_global(tmp_path: Path) -> None:
    svc, _ = with_store(tmp_path)
    with pytest.raises(InvalidArgument, match="scope TENANT"):
        await keys(svc, ADMIN, Scope.USER)


async def test_a_database_outside_the_view_is_not_found_like_a_missing_one(
    tmp_path: Path,
) -> None:
    svc, store = with_store(tmp_path)
    for key in ("b1", "a3", "x1", "nope"):
        with pytest.raises(NotFound, match="no such SQL database"):
            await sql.erase(svc, ADMIN, key, Scope.TENANT)
    assert store.erased == []
    assert await sql.erase(svc, ADMIN, "a2", Scope.TENANT) == 10
    assert store.erased == ["a2"]
