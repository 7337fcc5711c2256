"""``usage`` (``resolvers.usage``) on a recording executor: every plane counted exactly beside
its limit, and the SQL row only for a caller with the scope's SQL grant."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Forbidden
from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.scopes import Plane
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import plane_usage as usage
from palimpsest.sqlmem import DatabaseInfo
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
    if statement.name == "COUNT_QUOTA_VERSIONS":
        return [{"used": 4}]
    return [{"used": 3}]


class Store:
    def __init__(self, key: str) -> None:
        self.key = key

    async def databases(self) -> list[DatabaseInfo]:
        return [
            DatabaseInfo(self.key, "acme", Scope.USER, "alice", 700, NOW),
            DatabaseInfo("other", "acme", Scope.USER, "bob", 9, NOW),
        ]


def with_store(tmp_path: Path, **settings: Any) -> Services:
    svc, _ = services(answer, tmp_path, **settings)
    key = resolve_scope(principal(), Scope.USER, Plane.SQL).scope_key
    return replace(svc, sql=Store(key))  # type: ignore[arg-type]  # only what usage.py calls


async def test_every_plane_is_counted_beside_its_limit(tmp_path: Path) -> None:
    svc = with_store(tmp_path, max_scope_facts=0, sql_max_db_bytes=1000)
    found = await usage.usage(svc, principal(), Scope.USER)
    planes = {p.plane: p for p in found.planes}
    assert planes["versions"].used == 4
    assert planes["facts"].used == 3
    assert planes["facts"].limit is None  # 0: no limit
    assert planes["facts"].setting == "PALIMPSEST_MAX_SCOPE_FACTS"
    assert (planes["sqlBytes"].used, planes["sqlBytes"].limit) == (700, 1000)  # its own only


async def test_without_the_sql_grant_the_sql_row_is_left_out(tmp_path: Path) -> None:
    svc = with_store(tmp_path)
    who = principal(sql_scopes=frozenset({Scope.TENANT}))
    found = await usage.usage(svc, who, Scope.USER)
    assert "sqlBytes" not in {p.plane for p in found.planes}
    assert "noteBytes" in {p.plane for p in found.planes}


async def test_without_the_memory_grant_nothing_is_read(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    with pytest.raises(Forbidden):
        await usage.usage(svc, principal(memory_scopes=frozenset({Scope.USER})), Scope.TENANT)
    assert recorder.calls == []
