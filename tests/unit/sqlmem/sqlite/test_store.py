"""The SQLite store: files per scope, atomic batches, limits, listing and erasure."""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from palimpsest.errors import Conflict, InvalidArgument, QuotaExceeded
from palimpsest.identity import Scope, ScopeRef
from palimpsest.sqlmem import SqliteStore, SqlStatement
from palimpsest.sqlmem.core.base import QueryResult
from palimpsest.sqlmem.sqlite import files
from palimpsest.sqlmem.sqlite.store import MAX_BATCH
from palimpsest.sqlmem.sqlite.worker import Batch
from tests.unit.principals import forged, scope_ref
from tests.unit.workers.gated import Gate, default_threads_held


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
        who, [SqlStatement("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT UNIQUE, b BLOB)")]
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
    store.execute_sync(ALICE, [SqlStatement("INSERT INTO notes (body) VALUES ('alice')")])
    store.execute_sync(BOB, [SqlStatement("INSERT INTO notes (body) VALUES ('bob')")])
    assert store.query_sync(ALICE, "SELECT body FROM notes", None).rows == [["alice"]]
    assert store.query_sync(BOB, "SELECT body FROM notes", None).rows == [["bob"]]
    with pytest.raises(InvalidArgument, match="no such table"):
        store.query_sync(TEAM, "SELECT body FROM notes", None)


def test_a_bad_scope_key_touches_no_file(store: SqliteStore, tmp_path: Path) -> None:
    evil = forged(ALICE, "../../etc/passwd")
    with pytest.raises(InvalidArgument, match="scope key"):
        store.execute_sync(evil, [SqlStatement("CREATE TABLE t (a)")])
    with pytest.raises(InvalidArgument, match="scope key"):
        store.query_sync(forged(ALICE, "A" * 32), "SELECT 1", None)
    assert list(tmp_path.iterdir()) == []


def test_positional_and_named_args_rows_affected_and_last_row_id(store: SqliteStore) -> None:
    make_notes(store)
    results = store.execute_sync(
        ALICE,
        [
            SqlStatement("INSERT INTO notes (body, b) VALUES (?, ?)", ["one", {"$base64": "AAH/"}]),
            SqlStatement(
                "INSERT INTO notes (id, body) VALUES (:id, @body)", {"id": 41, "body": "x"}
            ),
            SqlStatement("REPLACE INTO notes (id, body) VALUES ($id, 'y')", {"$id": 41}),
            SqlStatement("UPDATE notes SET body = body || '!' WHERE id > ?", [0]),
            SqlStatement("DELETE FROM notes WHERE id = 41"),
        ],
    )
    affected = [(r.rows_affected, r.last_insert_id) for r in results]
    assert affected == [(1, 1), (1, 41), (1, 41), (2, None), (1, None)]
    rows = store.query_sync(ALICE, "SELECT body, b FROM notes", None).rows
    assert rows == [["one!", {"$base64": "AAH/"}]]


def test_a_batch_failing_halfway_leaves_no_change(store: SqliteStore) -> None:
    make_notes(store)
    store.execute_sync(ALICE, [SqlStatement("INSERT INTO notes (body) VALUES ('kept')")])
    with pytest.raises(Conflict, match="UNIQUE") as caught:
        store.execute_sync(
            ALICE,
            [
                SqlStatement("CREATE TABLE more (a)"),
                SqlStatement("INSERT INTO notes (body) VALUES ('new')"),
                SqlStatement("INSERT INTO notes (body) VALUES ('kept')"),  # fails
                SqlStatement("INSERT INTO notes (body) VALUES ('never')"),
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
            [
                SqlStatement("INSERT INTO notes (body) VALUES ('a')"),
                SqlStatement("ATTACH 'x' AS y"),
            ],
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
    # Unstopped, the count never ends; the bound is loose because the machine may be busy.
    assert time.monotonic() - started < 10
    assert caught.value.details["limit"] == "statementTimeoutMs"
    assert caught.value.details["timeoutMs"] == 300


def test_a_long_write_is_stopped_and_rolled_back(store: SqliteStore) -> None:
    make_notes(store)
    with pytest.raises(QuotaExceeded, match="timeout"):
        store.execute_sync(
            ALICE,
            [
                SqlStatement("INSERT INTO notes (body) VALUES ('first')"),
                SqlStatement(
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
    store.execute_sync(ALICE, [SqlStatement("INSERT INTO notes (body) VALUES ('small')")])
    big = (
        "INSERT INTO notes (b) WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c "
        "WHERE n < 100) SELECT randomblob(4000) FROM c"
    )
    with pytest.raises(QuotaExceeded, match="quota of 262144 bytes") as caught:
        store.execute_sync(ALICE, [SqlStatement(big)])
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
    store.execute_sync(ALICE, [SqlStatement("INSERT INTO notes (body) VALUES ('x')")])
    slow = SqliteStore(store.root, max_rows=5, timeout_ms=2000, max_bytes=0)
    done = threading.Event()

    def write() -> None:
        try:
            slow.execute_sync(
                ALICE,
                [
                    SqlStatement("INSERT INTO notes (body) VALUES ('y')"),
                    SqlStatement(
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
        TEAM, [SqlStatement("CREATE TABLE t (a)"), SqlStatement("INSERT INTO t VALUES (?)", [7])]
    )
    assert results[1].rows_affected == 1
    assert (await store.query(TEAM, "SELECT a FROM t", None)).rows == [[7]]
    assert [d.scope for d in await store.databases()] == [Scope.TENANT]
    assert await store.erase(TEAM.scope_key)
    assert await store.databases() == []


# -- result limits while rows are produced (issue 11, finding 4) ---------------------------


@pytest.fixture
def tight(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(
        tmp_path / "tight",
        max_rows=1000,
        timeout_ms=2000,
        max_bytes=4 * 1024 * 1024,
        max_value_bytes=64 * 1024,
        max_result_bytes=256 * 1024,
        max_columns=8,
    )
    yield s
    s.close()


def test_a_huge_value_is_never_built_and_the_limit_is_named(store: SqliteStore) -> None:
    # The attack of the finding: 8 x 15 MB, once a 160 MB response.
    sql = "SELECT " + ", ".join(["zeroblob(15000000)"] * 8)
    with pytest.raises(QuotaExceeded, match="1048576 bytes") as caught:
        store.query_sync(ALICE, sql, None)
    assert caught.value.details["limit"] == "sqlMaxValueBytes"
    assert caught.value.details["maxValueBytes"] == 1024 * 1024


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT zeroblob(70000)",
        "SELECT randomblob(70000)",
        "SELECT replace(printf('%.*c', 40000, 'x'), 'x', 'yy')",
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20) "
        "SELECT length(group_concat(printf('%.*c', 4000, 'x'), '')) FROM c",
        "SELECT length(CAST(zeroblob(70000) AS TEXT))",
    ],
)
def test_sqlite_refuses_to_build_any_value_over_the_cap(tight: SqliteStore, sql: str) -> None:
    with pytest.raises(QuotaExceeded) as caught:
        tight.query_sync(ALICE, sql, None)
    assert caught.value.details == {
        "limit": "sqlMaxValueBytes",
        "maxValueBytes": 64 * 1024,
        "statement": 0,
    }
    # just under the cap works
    assert tight.query_sync(ALICE, "SELECT length(zeroblob(65536))", None).rows == [[65536]]


def test_printf_gives_up_at_the_value_cap(tight: SqliteStore) -> None:
    # SQLite's printf stops building at the limit and answers NULL rather than an error.
    rows = tight.query_sync(
        ALICE, "SELECT printf('%.*c', 70000, 'x'), printf('%.*c', 9, 'x')", None
    )
    assert rows.rows == [[None, "xxxxxxxxx"]]


def test_bound_values_and_stored_rows_obey_the_value_cap(tight: SqliteStore) -> None:
    with pytest.raises(QuotaExceeded, match="65536 bytes"):
        tight.query_sync(ALICE, "SELECT length(?)", ["x" * 70_000])
    tight.execute_sync(ALICE, [SqlStatement("CREATE TABLE t (a BLOB, b BLOB)")])
    with pytest.raises(QuotaExceeded, match="65536 bytes"):
        # each value fits, the row does not
        tight.execute_sync(
            ALICE,
            [
                SqlStatement("INSERT INTO t VALUES (zeroblob(10), zeroblob(10))"),
                SqlStatement("INSERT INTO t VALUES (zeroblob(40000), zeroblob(40000))"),
            ],
        )
    assert tight.query_sync(ALICE, "SELECT count(*) FROM t", None).rows == [[0]]


def test_the_result_stops_before_the_row_that_would_pass_the_byte_cap(
    tight: SqliteStore,
) -> None:
    sql = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 50) "
        "SELECT n, zeroblob(30000) FROM c"
    )
    result = tight.query_sync(ALICE, sql, None)
    assert result.truncated
    assert result.truncated_by == "sqlMaxResultBytes"
    # each row is about 40 KB as JSON (base64): 6 of them fit in 256 KiB, the 7th does not
    assert [r[0] for r in result.rows] == [1, 2, 3, 4, 5, 6]
    encoded = orjson.dumps(result.rows)
    assert 6 * 40_000 < len(encoded) <= 256 * 1024
    whole = tight.query_sync(ALICE, sql.replace("n < 50", "n < 6"), None)
    assert (whole.truncated, whole.truncated_by, len(whole.rows)) == (False, None, 6)


def test_a_first_row_over_the_byte_cap_is_refused_with_numbers(tight: SqliteStore) -> None:
    sql = "SELECT " + ", ".join(["zeroblob(60000)"] * 5)  # 5 x 80 KB as base64
    with pytest.raises(QuotaExceeded, match="result limit is 262144") as caught:
        tight.query_sync(ALICE, sql, None)
    assert caught.value.details["limit"] == "sqlMaxResultBytes"
    assert caught.value.details["rowBytes"] > 5 * 80_000


def test_the_row_cap_names_itself(store: SqliteStore) -> None:
    sql = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 9) SELECT n"
    sql += " FROM c"
    assert store.query_sync(ALICE, sql, None).truncated_by == "sqlMaxRows"


def test_the_column_cap_refuses_before_the_statement_runs(tight: SqliteStore) -> None:
    # Running it would end in the timeout's error, not this one: the width is known from
    # compiling it.
    sql = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
        "SELECT count(*), 2, 3, 4, 5, 6, 7, 8, 9 FROM c"
    )
    with pytest.raises(QuotaExceeded, match="returns 9 columns; the limit is 8") as caught:
        tight.query_sync(ALICE, sql, None)
    assert caught.value.details["limit"] == "sqlMaxColumns"
    tight.execute_sync(ALICE, [SqlStatement("CREATE TABLE w (" + ", ".join("abcdefghi") + ")")])
    with pytest.raises(QuotaExceeded, match="returns 9 columns"):
        tight.query_sync(ALICE, "SELECT * FROM w", None)
    assert tight.query_sync(ALICE, "SELECT a, b FROM w UNION ALL SELECT 1, 2", None).rows == [
        [1, 2]
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE VIEW v AS SELECT * FROM pragma_database_list",
        "CREATE VIEW v AS SELECT name FROM pragma_table_info('notes')",
        "CREATE VIEW v AS SELECT * FROM dbstat",
        "CREATE TABLE c AS SELECT * FROM pragma_compile_options",
        "INSERT INTO notes (body) SELECT file FROM pragma_database_list",
    ],
)
def test_pragma_functions_are_refused_in_writes_and_views(store: SqliteStore, sql: str) -> None:
    make_notes(store)
    with pytest.raises(InvalidArgument, match="statement refused"):
        store.execute_sync(ALICE, [SqlStatement(sql)])
    names = store.query_sync(ALICE, "SELECT name FROM sqlite_master ORDER BY name", None)
    assert names.rows == [["notes"], ["sqlite_autoindex_notes_1"]]


def test_the_authorizer_alone_refuses_a_view_over_a_pragma(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the validator out of the way, the connection itself refuses the view."""
    import palimpsest.sqlmem.sqlite.store as store_module
    from palimpsest.sqlmem.sqlite.validator import Checked, Kind

    make_notes(store)
    monkeypatch.setattr(store_module, "check_exec", lambda sql: Checked(sql, Kind.CREATE))
    monkeypatch.setattr(store_module, "check_query", lambda sql: Checked(sql, Kind.SELECT))
    # trusted_schema=OFF already stops the view's body; the authorizer would too
    # (test_authorizer.py shows it without that pragma).
    with pytest.raises(InvalidArgument, match="pragma_database_list") as caught:
        store.execute_sync(
            ALICE,
            [
                SqlStatement("INSERT INTO notes (body) VALUES ('kept?')"),
                SqlStatement("CREATE VIEW v AS SELECT * FROM pragma_database_list"),
            ],
        )
    assert caught.value.details["statement"] == 1
    assert count(store) == 0  # the whole batch was rolled back
    for sql in ("SELECT * FROM pragma_database_list", 'SELECT * FROM main."PRAGMA_Database_List"'):
        with pytest.raises(InvalidArgument, match="authorizer"):
            store.query_sync(ALICE, sql, None)


async def test_callers_beyond_the_workers_wait_holding_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteStore(tmp_path / "sql", max_rows=5, timeout_ms=300, max_bytes=1024, workers=1)
    gate = Gate()

    def run(request: Any) -> Any:
        gate.hold()  # the one worker busy: every other caller must wait for it
        return [] if isinstance(request, Batch) else QueryResult([], [], False)

    monkeypatch.setattr(store._pool, "run", run)
    owners = [ref("acme", Scope.USER, f"u{n}") for n in range(3)]
    write = [SqlStatement("CREATE TABLE t (x)")]
    calls: list[Callable[[], Coroutine[Any, Any, object]]] = [
        *(functools.partial(store.query, o, "SELECT 1", None) for o in owners),
        *(functools.partial(store.execute, o, write) for o in owners),
    ]
    try:
        assert await default_threads_held(gate, calls) == 0
    finally:
        store.close()
    assert gate.most == 1
