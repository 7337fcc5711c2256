"""A SQL Memory database dumped to records and loaded back through the validating store."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope
from palimpsest.sqlmem import SqliteStore, SqlStatement
from palimpsest.sqlmem.core import dump
from tests.unit.principals import scope_ref

MakeStore = Callable[[Path], SqliteStore]


@pytest.fixture
def store() -> Iterator[MakeStore]:
    """Stores closed afterwards: each runs SQL in worker processes of its own."""
    made: list[SqliteStore] = []

    def make(root: Path) -> SqliteStore:
        made.append(SqliteStore(root, max_rows=1000, timeout_ms=2000, max_bytes=0))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_dump_and_load_reproduce_schema_and_rows(tmp_path: Path, store: MakeStore) -> None:
    source, target = store(tmp_path / "a"), store(tmp_path / "b")
    ref = scope_ref("acme", Scope.USER, "alice")
    asyncio.run(
        source.execute(
            ref,
            [
                SqlStatement(
                    'CREATE TABLE "odd ""name""" (id INTEGER PRIMARY KEY, v TEXT, b BLOB, f REAL)'
                ),
                SqlStatement('CREATE INDEX by_v ON "odd ""name""" (v)'),
                SqlStatement(
                    'INSERT INTO "odd ""name""" (v, b, f) VALUES (?, ?, ?), (?, ?, ?)',
                    ["x", {"$base64": "AAE="}, {"$float": "Infinity"}, None, None, 1.5],
                ),
            ],
        )
    )
    records = asyncio.run(source.dump(ref.scope_key))
    assert [r["kind"] for r in records] == ["sql_schema", "sql_row", "sql_row", "sql_schema"]
    assert records[1]["values"] == [1, "x", {"$base64": "AAE="}, {"$float": "Infinity"}]
    for batch in dump.load_statements(records):
        asyncio.run(target.execute(ref, batch))
    assert asyncio.run(target.dump(ref.scope_key)) == records
    rows = asyncio.run(target.query(ref, 'SELECT f FROM "odd ""name""" ORDER BY id', None)).rows
    assert rows[0] == [{"$float": "Infinity"}]
    assert math.isclose(rows[1][0], 1.5)


def test_no_database_dumps_to_nothing_and_a_forbidden_statement_does_not_load(
    tmp_path: Path, store: MakeStore
) -> None:
    ref = scope_ref("acme", Scope.USER, "bob")
    assert asyncio.run(store(tmp_path).dump(ref.scope_key)) == []
    hostile = [{"kind": "sql_schema", "type": "table", "name": "t", "sql": "ATTACH 'x' AS y"}]
    [batch] = dump.load_statements(hostile)
    with pytest.raises(InvalidArgument):
        asyncio.run(store(tmp_path).execute(ref, batch))
