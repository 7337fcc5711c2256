"""The SQLite store: files per scope, atomic batches, limits, listing and erasure."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.errors import Conflict, InvalidArgument, QuotaExceeded
from palimpsest.identity import Scope, ScopeRef
from palimpsest.sqlmem import SqliteStore, Statement, files
from palimpsest.sqlmem.store import MAX_BATCH
from tests.unit.principals import forged, scope_ref


def ref(tenant: str, scope: Scope, owner: str) -> ScopeRef:
    return scope_ref(tenant, scope, owner)


ALICE = ref("acme", Scope.USER, "alice")
BOB = ref("acme", Scope.USER, "bob")
TEAM = ref("acme", Scope.TENANT, "acme")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "sql", max_rows=5, timeout_ms=300, max_bytes=256 * 1024)
    yield s
    s.close()


def make_notes(store: SqliteStore, who: ScopeRef = ALICE) -> None:
    store.execute_sync(
        who, [Statement("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT UNIQUE, b BLOB)")]
    )


def count(store: SqliteStore, who: ScopeRef = ALICE) -> int:
    return int(store.query_sync(who, "SELECT count(*) FROM notes", None).rows[0][0])


def test_files_are_per_scope_named_by_key_and_created_on_first_write(
    store: SqliteStore, tmp_path: Path
) -> None:
    assert store.query_sync(ALICE, "SELECT 1 AS one", None).rows == [[1]]
    assert not (tmp_path / "sql").exists()  # a read never creates a file
    make_notes(store)
    assert (tmp_path / "sql" / f"{ALICE.scope_key}.db").exists()
    make_notes(store, BOB)
    store.execute_sync(ALICE, [Statement("INSERT INTO notes (body) VALUES ('alice')")])
    store.execute_sync(BOB, [Statement("INSERT INTO notes (body) VALUES ('bob')")])
    assert store.query_sync(ALICE, "SELECT body FROM notes", None).rows == [["alice"]]
    assert store.query_sync(BOB, "SELECT body FROM notes", None).rows == [["bob"]]
    with pytest.raises(InvalidArgument, match="no such table"):
        store.query_sync(TEAM, "SELECT body FROM notes", None)


def test_a_bad_scope_key_touches_no_file(store: SqliteStore, tmp_path: Path) -> None:
    evil = forged(ALICE, "../../etc/passwd")
    with pytest.raises(InvalidArgument, match="scope key"):
        store.execute_sync(evil, [Statement("CREATE TABLE t (a)")])
    with pytest.raises(InvalidArgument, match="scope key"):
        store.query_sync(forged(ALICE, "A" * 32), "SELECT 1", None)
    assert list(tmp_path.iterdir()) == []


def test_positional_and_named_args_rows_affected_and_last_row_id(store: SqliteStore) -> None:
    make_notes(store)
    results = store.execute_sync(
        ALICE,
        [
            Statement("INSERT INTO notes (body, b) VALUES (?, ?)", ["one", {"$base64": "AAH/"}]),
            Statement("INSERT INTO notes (id, body) VALUES (:id, @body)", {"id": 41, "body": "x"}),
            Statement("REPLACE INTO notes (id, body) VALUES ($id, 'y')", {"$id": 41}),
            Statement("UPDATE notes SET body = body || '!' WHERE id > ?", [0]),
            Statement("DELETE FROM notes WHERE id = 41"),
        ],
    )
    affected = [(r.rows_affected, r.last_insert_id) for r in results]
    assert affected == [(1, 1), (1, 41), (1, 41), (2, None), (1, None)]
    rows = store.query_sync(ALICE, "SELECT body, b FROM notes", None).rows
    assert rows == [["one!", {"$base64": "AAH/"}]]


def test_a_batch_failing_halfway_leaves_no_change(store: SqliteStore) -> None:
    make_notes(store)
    store.execute_sync(ALICE, [Statement("INSERT INTO notes (body) VALUES ('kept')")])
    with pytest.raises(Conflict, match="UNIQUE") as caught:
        store.execute_sync(
            ALICE,
            [
                Statement("CREATE TABLE more (a)"),
                Statement("INSERT INTO notes (body) VALUES ('new')"),
                Statement("INSERT INTO notes (body) VALUES ('kept')"),  # fails
                Statement("INSERT INTO notes (body) VALUES ('never')"),
            ],
        )
    assert caught.value.details["statement"] == 2
    assert store.query_sync(ALICE, "SELECT body FROM notes", None).rows == [["kept"]]
    tables = store.query_sync(ALICE, "SELECT name FROM sqlite_master WHERE type='table'", None)
    assert tables.rows == [["notes"]]


def test_a_refused_statement_anywhere_means_nothing_runs(store: SqliteStore) -> None:
    make_notes(store)
    with pytest.raises(InvalidArgument, match="ATTACH"):
        store.execute_sync(
            ALICE,
            [Statement("INSERT INTO notes (body) VALUES ('a')"), Statement("ATTACH 'x' AS y")],
        )
    assert count(store) == 0


def test_a_long_query_is_stopped_in_time_with_a_clear_error(store: SqliteStore) -> None:
    started = time.monotonic()
    with pytest.raises(QuotaExceeded, match="statement timeout of 300 ms exceeded") as caught:
        store.query_sync(
            ALICE,
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
            "SELECT count(*) FROM c",
            None,
        )
    assert time.monotonic() - started < 1.3
    assert caught.value.details["limit"] == "statementTimeoutMs"
    assert caught.value.details["timeoutMs"] == 300


def test_a_long_write_is_stopped_and_rolled_back(store: SqliteStore) -> None:
    make_notes(store)
    with pytest.raises(QuotaExceeded, match="timeout"):
        store.execute_sync(
            ALICE,
            [
                Statement("INSERT INTO notes (body) VALUES ('first')"),
                Statement(
                    "INSERT INTO notes (body) WITH RECURSIVE c(n) AS "
                    "(SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT NULL FROM c WHERE n < 0"
                ),
            ],
        )
    assert count(store) == 0


def test_rows_are_capped_with_a_truncated_flag(store: SqliteStore) -> None:
    sql = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {}) "
        "SELECT n FROM c"
    )
    capped = store.query_sync(ALICE, sql.format(9), None)
    assert capped.rows == [[1], [2], [3], [4], [5]]
    assert capped.truncated
    exact = store.query_sync(ALICE, sql.format(5), None)
    assert exact.columns == ["n"]
    assert not exact.truncated


def test_the_size_quota_refuses_with_numbers_and_changes_nothing(store: SqliteStore) -> None:
    make_notes(store)
    store.execute_sync(ALICE, [Statement("INSERT INTO notes (body) VALUES ('small')")])
    big = (
        "INSERT INTO notes (b) WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c "
        "WHERE n < 100) SELECT randomblob(4000) FROM c"
    )
    with pytest.raises(QuotaExceeded, match="quota of 262144 bytes") as caught:
        store.execute_sync(ALICE, [Statement(big)])
    assert caught.value.details["quota"] == 262144
    assert 0 < caught.value.details["current"] < 262144
    assert count(store) == 1


def test_values_are_json_safe(store: SqliteStore) -> None:
    result = store.query_sync(
        ALICE, "SELECT x'00ff', 1.5, 9e999, -9e999, NULL, 'text', 9223372036854775807", None
    )
    assert result.rows == [
        [
            {"$base64": "AP8="},
            1.5,
            {"$float": "Infinity"},
            {"$float": "-Infinity"},
            None,
            "text",
            9223372036854775807,
        ]
    ]


@pytest.mark.parametrize(
    "args",
    [{"a": [1]}, [{"nested": 1}], [2**64], "text", [{"$base64": "!!"}]],
)
def test_bad_args_are_refused(store: SqliteStore, args: object) -> None:
    with pytest.raises(InvalidArgument):
        store.query_sync(ALICE, "SELECT ?", args)


def test_batch_size_is_bounded(store: SqliteStore) -> None:
    with pytest.raises(InvalidArgument, match=f"1 to {MAX_BATCH}"):
        store.execute_sync(ALICE, [])


def test_listing_and_erasure(store: SqliteStore, tmp_path: Path) -> None:
    make_notes(store)
    make_notes(store, TEAM)
    listed = {d.key: d for d in files.list_databases(store.root)}
    assert set(listed) == {ALICE.scope_key, TEAM.scope_key}
    assert listed[ALICE.scope_key].tenant_id == "acme"
    assert listed[ALICE.scope_key].scope is Scope.USER
    assert listed[ALICE.scope_key].owner_id == "alice"
    assert listed[ALICE.scope_key].bytes > 0
    freed = store.erase_sync(ALICE.scope_key)
    assert freed is not None
    assert freed > 0
    assert store.erase_sync(ALICE.scope_key) is None
    assert sorted(p.name for p in (tmp_path / "sql").iterdir() if ALICE.scope_key in p.name) == []
    with pytest.raises(InvalidArgument, match="no such table"):
        count(store)
    make_notes(store)  # a fresh, empty database afterwards
    assert count(store) == 0


def test_readers_run_while_a_writer_holds_the_file(store: SqliteStore) -> None:
    make_notes(store)
    store.execute_sync(ALICE, [Statement("INSERT INTO notes (body) VALUES ('x')")])
    slow = SqliteStore(store.root, max_rows=5, timeout_ms=2000, max_bytes=0)
    done = threading.Event()

    def write() -> None:
        try:
            slow.execute_sync(
                ALICE,
                [
                    Statement("INSERT INTO notes (body) VALUES ('y')"),
                    Statement(
                        "INSERT INTO notes (body) WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL "
                        "SELECT n + 1 FROM c WHERE n < 200000) SELECT NULL FROM c WHERE n < 0"
                    ),
                ],
            )
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    seen = []
    while not done.is_set():
        seen.append(count(store))  # WAL: reads see the last commit, never block
    writer.join()
    slow.close()
    # WAL: reads never block on the writer and see the last commit, then the new one.
    assert seen[0] == 1
    assert seen == sorted(seen)
    assert set(seen) <= {1, 2}
    assert count(store) == 2


def test_the_connection_is_hardened(store: SqliteStore) -> None:
    make_notes(store)
    path = store.root / f"{ALICE.scope_key}.db"
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert raw.execute("PRAGMA auto_vacuum").fetchone() == (1,)
    # sqlglot knows sqlite_version() as a typed function, so layer 1 passes it; layer 2 refuses.
    with pytest.raises(InvalidArgument, match="authorizer: function sqlite_version"):
        store.query_sync(ALICE, "SELECT sqlite_version()", None)


async def test_the_async_interface_runs_off_the_loop(store: SqliteStore) -> None:
    results = await store.execute(
        TEAM, [Statement("CREATE TABLE t (a)"), Statement("INSERT INTO t VALUES (?)", [7])]
    )
    assert results[1].rows_affected == 1
    assert (await store.query(TEAM, "SELECT a FROM t", None)).rows == [[7]]
    assert [d.scope for d in await store.databases()] == [Scope.TENANT]
    assert await store.erase(TEAM.scope_key)
    assert await store.databases() == []
