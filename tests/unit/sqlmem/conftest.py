"""Both SQL Memory backends for the same tests: SQLite in a temporary directory, PostgreSQL on
the managed server (`palimpsest postgres start`; `make test` starts it), each test in fresh
random scopes so runs never meet."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest.config import Settings
from palimpsest.identity import Scope, ScopeRef
from palimpsest.local.postgres import conninfo
from palimpsest.sqlmem import SqliteStore
from palimpsest.sqlmem.postgres.store import PostgresStore
from tests.unit.principals import scope_ref

# The PostgreSQL half is marked: `make check` runs the unit tier with no server at all.
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
Store = SqliteStore | PostgresStore
MakeStore = Callable[..., Store]


@pytest.fixture(scope="session")
def pg_conninfo() -> dict[str, Any]:
    return conninfo(Settings())


@pytest.fixture
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    """A factory of stores of the test's backend (``request.param``), closed afterwards."""
    made: list[Store] = []
    backend = request.param
    pg_conninfo: dict[str, Any] = (
        request.getfixturevalue("pg_conninfo") if backend == "postgres" else {}
    )

    def make(**limits: Any) -> Store:
        defaults = {
            "max_rows": 5,
            "timeout_ms": 300,
            "max_bytes": 256 * 1024,
            "max_value_bytes": 1024 * 1024,
            "max_result_bytes": 8 * 1024 * 1024,
            "max_columns": 100,
        }
        options = {**defaults, **limits}
        store: Store
        if backend == "sqlite":
            store = SqliteStore(tmp_path / f"sql{len(made)}", **options)
        else:
            store = PostgresStore(pg_conninfo, pool_size=8, **options)
            store.prepare()
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


class Scopes:
    """Fresh scopes of one test; their PostgreSQL schemas are erased afterwards."""

    def __init__(self) -> None:
        self.tenant = f"t-{uuid.uuid4().hex[:10]}"
        self.made: list[ScopeRef] = []

    def __call__(self, owner: str, scope: Scope = Scope.USER) -> ScopeRef:
        ref = scope_ref(self.tenant, scope, self.tenant if scope is Scope.TENANT else owner)
        self.made.append(ref)
        return ref


@pytest.fixture
def scopes(request: pytest.FixtureRequest) -> Iterator[Scopes]:
    made = Scopes()
    if request.node.get_closest_marker("postgres") is None:
        yield made  # a SQLite test makes no PostgreSQL schema, and may run with no server
        return
    pg_conninfo: dict[str, Any] = request.getfixturevalue("pg_conninfo")
    yield made
    cleaner = PostgresStore(
        pg_conninfo,
        max_rows=1,
        timeout_ms=1000,
        max_bytes=0,
        max_value_bytes=1024,
        max_result_bytes=1024,
        max_columns=1,
    )
    try:
        cleaner.prepare()  # the keyed names need the naming key, made when first prepared
        for ref in made.made:
            cleaner.erase_sync(ref.scope_key)
    finally:
        cleaner.close()
