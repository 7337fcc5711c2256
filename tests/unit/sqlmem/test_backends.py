"""The guarantees of SQL Memory, run the same way against both backends (SQLite, PostgreSQL).

Where the two dialects spell a thing differently (a blob type, a long string), ``SQL`` gives
each backend's spelling; the assertions are the same."""

from __future__ import annotations

import time

import orjson
import pytest

from palimpsest.errors import Conflict, InvalidArgument, QuotaExceeded
from palimpsest.identity import Scope, ScopeRef
from palimpsest.sqlmem import DatabaseInfo, SqliteStore, SqlStatement
from palimpsest.sqlmem.postgres.store import PostgresStore
from palimpsest.sqlmem.sqlite import files
from palimpsest.sqlmem.sqlite.store import MAX_BATCH
from tests.unit.sqlmem.conftest import BACKENDS, MakeStore, Scopes, Store

pytestmark = pytest.mark.parametrize("make_store", BACKENDS, indirect=True)

SQL = {
    "sqlite": {
        "notes": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT UNIQUE, b BLOB)",
        "blob": "zeroblob({n})",
        "text": "CAST(zeroblob({n}) AS TEXT)",
        "bytes_literal": "x'00ff'",
        "refused": "ATTACH DATABASE 'x.db' AS x",
        "big_insert": "INSERT INTO notes (b) WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL "
        "SELECT n + 1 FROM c WHERE n < 100) SELECT randomblob(4000) FROM c",
    },
    "postgres": {
        "notes": "CREATE TABLE notes (id SERIAL PRIMARY KEY, body TEXT UNIQUE, b BYTEA)",
        # repeat() may build no string over the value cap, even on the way to a value
        "blob": "CAST(repeat('a', {n}) AS BYTEA)",
        "text": "repeat('x', {n})",
        "bytes_literal": "'\\x00ff'::bytea",
        "refused": "COPY notes FROM PROGRAM 'id'",
        "big_insert": "INSERT INTO notes (body) SELECT repeat(md5(random()::text), 8) "
        "FROM generate_series(1, 2000)",
    },
}
COUNT_FOREVER = (
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"
)
UP_TO = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {}) "


def sql(store: Store, name: str, **values: int) -> str:
    backend = "sqlite" if type(store).__name__ == "SqliteStore" else "postgres"
    return SQL[backend][name].format(**values)


def make_notes(store: Store, who: ScopeRef) -> None:
    store.execute_sync(who, [SqlStatement(sql(store, "notes"))])


def count(store: Store, who: ScopeRef) -> int:
    return int(store.query_sync(who, "SELECT count(*) FROM notes", None).rows[0][0])


def test_scopes_are_separate_and_a_read_creates_nothing(
    make_store: MakeStore, scopes: Scopes
) -> None:
    store = make_store()
    alice, bob, team = scopes("alice"), scopes("bob"), scopes("x", Scope.TENANT)
    assert store.query_sync(alice, "SELECT 1 AS one", None).rows == [[1]]
    listed = {d.key for d in _databases(store)}
    assert alice.scope_key not in listed  # a read never creates a database
    for who, body in ((alice, "alice"), (bob, "bob")):
        make_notes(store, who)
        store.execute_sync(who, [SqlStatement("INSERT INTO notes (body) VALUES (?)", [body])])
    assert store.query_sync(alice, "SELECT body FROM notes", None).rows == [["alice"]]
    assert store.query_sync(bob, "SELECT body FROM notes", None).rows == [["bob"]]
    with pytest.raises(InvalidArgument, match="no such table"):
        store.query_sync(team, "SELECT body FROM notes", None)


def test_positional_and_named_args_and_blobs(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice = make_store(), scopes("alice")
    make_notes(store, alice)
    results = store.execute_sync(
        alice,
        [
            SqlStatement("INSERT INTO notes (body, b) VALUES (?, ?)", ["one", {"$base64": "AAH/"}]),
            SqlStatement(
                "INSERT INTO notes (id, body) VALUES (:id, :body)", {"id": 41, "body": "x"}
            ),
            SqlStatement("UPDATE notes SET body = body || '!' WHERE id > ?", [0]),
            SqlStatement("DELETE FROM notes WHERE id = 41"),
        ],
    )
    assert [r.rows_affected for r in results] == [1, 1, 2, 1]
    rows = store.query_sync(alice, "SELECT body, b FROM notes WHERE body = :b", {"b": "one!"})
    assert rows.rows == [["one!", {"$base64": "AAH/"}]]


def test_a_batch_failing_halfway_leaves_no_change(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice = make_store(), scopes("alice")
    make_notes(store, alice)
    store.execute_sync(alice, [SqlStatement("INSERT INTO notes (body) VALUES ('kept')")])
    with pytest.raises(Conflict, match=r"(?i)unique") as caught:
        store.execute_sync(
            alice,
            [
                SqlStatement("CREATE TABLE more (a INTEGER)"),
                SqlStatement("INSERT INTO notes (body) VALUES ('new')"),
                SqlStatement("INSERT INTO notes (body) VALUES ('kept')"),  # fails
                SqlStatement("INSERT INTO notes (body) VALUES ('never')"),
            ],
        )
    assert caught.value.details["statement"] == 2
    assert store.query_sync(alice, "SELECT body FROM notes", None).rows == [["kept"]]
    with pytest.raises(InvalidArgument, match="no such table"):
        store.query_sync(alice, "SELECT count(*) FROM more", None)


def test_a_refused_statement_anywhere_means_nothing_runs(
    make_store: MakeStore, scopes: Scopes
) -> None:
    store, alice = make_store(), scopes("alice")
    make_notes(store, alice)
    with pytest.raises(InvalidArgument, match="statement refused"):
        store.execute_sync(
            alice,
            [
                SqlStatement("INSERT INTO notes (body) VALUES ('a')"),
                SqlStatement(sql(store, "refused")),
            ],
        )
    assert count(store, alice) == 0
    with pytest.raises(InvalidArgument, match="only one SQL statement"):
        store.query_sync(alice, "SELECT 1; SELECT 2", None)


def test_a_long_query_and_a_long_write_are_stopped_in_time(
    make_store: MakeStore, scopes: Scopes
) -> None:
    store, alice = make_store(), scopes("alice")
    started = time.monotonic()
    with pytest.raises(QuotaExceeded, match="statement timeout of 300 ms exceeded") as caught:
        store.query_sync(alice, COUNT_FOREVER, None)
    assert time.monotonic() - started < 2.5  # far from "never": the limit is 0.3 s
    assert (caught.value.details["limit"], caught.value.details["timeoutMs"]) == (
        "statementTimeoutMs",
        300,
    )
    make_notes(store, alice)
    forever = (
        "INSERT INTO notes (body) WITH RECURSIVE c(n) AS "
        "(SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT NULL FROM c WHERE n < 0"
    )
    with pytest.raises(QuotaExceeded, match="timeout"):
        store.execute_sync(
            alice,
            [SqlStatement("INSERT INTO notes (body) VALUES ('first')"), SqlStatement(forever)],
        )
    assert count(store, alice) == 0


def test_rows_are_capped_and_the_cap_names_itself(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice = make_store(), scopes("alice")
    capped = store.query_sync(alice, UP_TO.format(9) + "SELECT n FROM c", None)
    assert capped.rows == [[1], [2], [3], [4], [5]]
    assert (capped.truncated, capped.truncated_by) == (True, "sqlMaxRows")
    exact = store.query_sync(alice, UP_TO.format(5) + "SELECT n FROM c", None)
    assert (exact.columns, exact.truncated, exact.truncated_by) == (["n"], False, None)


def test_the_size_quota_refuses_with_numbers_and_changes_nothing(
    make_store: MakeStore, scopes: Scopes
) -> None:
    store, alice = make_store(), scopes("alice")
    make_notes(store, alice)
    store.execute_sync(alice, [SqlStatement("INSERT INTO notes (body) VALUES ('small')")])
    with pytest.raises(QuotaExceeded, match="quota of 262144 bytes") as caught:
        store.execute_sync(alice, [SqlStatement(sql(store, "big_insert"))])
    assert caught.value.details["quota"] == 262144
    assert 0 < caught.value.details["current"] < 262144
    assert count(store, alice) == 1
    # the refused rows do not linger against the quota: a small write still fits
    store.execute_sync(alice, [SqlStatement("INSERT INTO notes (body) VALUES ('after')")])
    assert count(store, alice) == 2


def test_values_are_json_safe(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice = make_store(), scopes("alice")
    result = store.query_sync(
        alice,
        f"SELECT {sql(store, 'bytes_literal')}, 1.5, NULL, 'text', 9223372036854775807",
        None,
    )
    assert result.rows == [[{"$base64": "AP8="}, 1.5, None, "text", 9223372036854775807]]
    infinite = store.query_sync(alice, "SELECT ? AS a, ? AS b", [{"$float": "Infinity"}, 2])
    assert infinite.rows == [[{"$float": "Infinity"}, 2]]


@pytest.mark.parametrize("args", [{"a": [1]}, [{"nested": 1}], [2**64], "text", [{"$base64": "!"}]])
def test_bad_args_are_refused(make_store: MakeStore, scopes: Scopes, args: object) -> None:
    with pytest.raises(InvalidArgument):
        make_store().query_sync(scopes("alice"), "SELECT ?", args)


def test_batch_size_is_bounded(make_store: MakeStore, scopes: Scopes) -> None:
    with pytest.raises(InvalidArgument, match=f"1 to {MAX_BATCH}"):
        make_store().execute_sync(scopes("alice"), [])


def test_listing_and_erasure(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice, team = make_store(), scopes("alice"), scopes("x", Scope.TENANT)
    make_notes(store, alice)
    make_notes(store, team)
    listed = {d.key: d for d in _databases(store)}
    assert {alice.scope_key, team.scope_key} <= set(listed)
    mine = listed[alice.scope_key]
    assert (mine.tenant_id, mine.scope, mine.owner_id) == (scopes.tenant, Scope.USER, "alice")
    assert mine.bytes > 0
    freed = store.erase_sync(alice.scope_key)
    assert freed is not None
    assert freed > 0
    assert store.erase_sync(alice.scope_key) is None
    assert alice.scope_key not in {d.key for d in _databases(store)}
    with pytest.raises(InvalidArgument, match="no such table"):
        count(store, alice)
    make_notes(store, alice)  # a fresh, empty database afterwards
    assert count(store, alice) == 0
    assert count(store, team) == 0


async def test_the_async_interface_runs_off_the_loop(make_store: MakeStore, scopes: Scopes) -> None:
    store, team = make_store(), scopes("x", Scope.TENANT)
    results = await store.execute(
        team,
        [SqlStatement("CREATE TABLE t (a INTEGER)"), SqlStatement("INSERT INTO t VALUES (?)", [7])],
    )
    assert results[1].rows_affected == 1
    assert (await store.query(team, "SELECT a FROM t", None)).rows == [[7]]
    assert team.scope_key in {d.key for d in await store.databases()}
    assert await store.erase(team.scope_key)
    assert team.scope_key not in {d.key for d in await store.databases()}


def tight(make_store: MakeStore) -> Store:
    return make_store(
        max_rows=1000,
        timeout_ms=5000,
        max_bytes=4 * 1024 * 1024,
        max_value_bytes=64 * 1024,
        max_result_bytes=256 * 1024,
        max_columns=8,
    )


def test_no_value_over_the_cap_is_returned(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice = tight(make_store), scopes("alice")
    for value in (sql(store, "blob", n=70_000), sql(store, "text", n=70_000)):
        with pytest.raises(QuotaExceeded) as caught:
            store.query_sync(alice, f"SELECT {value}", None)
        assert caught.value.details == {
            "limit": "sqlMaxValueBytes",
            "maxValueBytes": 64 * 1024,
            "statement": 0,
        }
    just_under = store.query_sync(alice, f"SELECT length({sql(store, 'blob', n=65536)})", None)
    assert just_under.rows == [[65536]]
    with pytest.raises(QuotaExceeded, match="65536 bytes"):
        store.query_sync(alice, "SELECT length(?)", ["x" * 70_000])


def test_the_result_stops_before_the_row_that_would_pass_the_byte_cap(
    make_store: MakeStore, scopes: Scopes
) -> None:
    store, alice = tight(make_store), scopes("alice")
    query = UP_TO.format(50) + f"SELECT n, {sql(store, 'blob', n=30000)} FROM c"
    result = store.query_sync(alice, query, None)
    assert (result.truncated, result.truncated_by) == (True, "sqlMaxResultBytes")
    # each row is about 40 KB as JSON (base64): 6 of them fit in 256 KiB, the 7th does not
    assert [r[0] for r in result.rows] == [1, 2, 3, 4, 5, 6]
    assert 6 * 40_000 < len(orjson.dumps(result.rows)) <= 256 * 1024
    whole = store.query_sync(alice, query.replace("n < 50", "n < 6"), None)
    assert (whole.truncated, whole.truncated_by, len(whole.rows)) == (False, None, 6)


def test_a_first_row_over_the_byte_cap_is_refused(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice = tight(make_store), scopes("alice")
    wide = "SELECT " + ", ".join([sql(store, "blob", n=60000)] * 5)  # 5 x 80 KB as base64
    with pytest.raises(QuotaExceeded, match="result limit is 262144") as caught:
        store.query_sync(alice, wide, None)
    assert caught.value.details["limit"] == "sqlMaxResultBytes"
    assert caught.value.details["rowBytes"] > 5 * 80_000


def test_the_column_cap_refuses_before_the_statement_runs(
    make_store: MakeStore, scopes: Scopes
) -> None:
    store, alice = tight(make_store), scopes("alice")
    # Running it would take until the timeout; the width is known before it runs.
    query = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
        "SELECT count(*), 2, 3, 4, 5, 6, 7, 8, 9 FROM c"
    )
    started = time.monotonic()
    with pytest.raises(QuotaExceeded, match="returns 9 columns; the limit is 8") as caught:
        store.query_sync(alice, query, None)
    assert caught.value.details["limit"] == "sqlMaxColumns"
    assert time.monotonic() - started < 2.0  # the timeout is 5 s: it never ran


# Values built inside one function call, where a time limit checked between steps never runs:
# each must end within the limit with a coded error, never hang or fail as INTERNAL.
BUILT_IN_ONE_CALL = {
    "sqlite": [
        "SELECT printf('%.*c', 2000000000, 'x')",
        "SELECT format('%2000000000.2000000000c', 'x')",
        "SELECT zeroblob(2000000000)",
        "SELECT randomblob(2000000000)",
        "SELECT length(replace(hex(zeroblob(500000)), '0', '00'))",
        "SELECT substr(hex(zeroblob(500000)), 1, 2000000000) || hex(zeroblob(500000))",
        "SELECT hex(hex(zeroblob(300000)))",
        UP_TO.format(10**12) + "SELECT length(group_concat(hex(zeroblob(1000)))) FROM c",
    ],
    "postgres": [
        "SELECT length(repeat('x', 2000000000))",
        "SELECT length(lpad('x', 2000000000))",
        "SELECT length(rpad('x', 2000000000, 'ab'))",
        "SELECT length(format('%2000000000s', 'x'))",
        "SELECT length(format('%*s', 2000000000, 'x'))",
        "SELECT count(*) FROM generate_series(1, 1000000000000)",
        "SELECT length(string_agg('xxxx', '')) FROM generate_series(1, 1000000000000)",
        UP_TO.format(10**12) + "SELECT count(*) FROM c",
    ],
}


@pytest.mark.parametrize("case", range(8))
def test_a_value_built_in_one_call_ends_within_the_limit(
    make_store: MakeStore, scopes: Scopes, case: int
) -> None:
    store, alice = make_store(), scopes("alice")
    backend = "sqlite" if type(store).__name__ == "SqliteStore" else "postgres"
    started = time.monotonic()
    with pytest.raises((QuotaExceeded, InvalidArgument)) as caught:
        store.query_sync(alice, BUILT_IN_ONE_CALL[backend][case], None)
    elapsed = time.monotonic() - started
    assert elapsed < 1.5, f"took {elapsed:.1f} s under a 0.3 s limit"  # printf took 15 s
    assert caught.value.code in ("QUOTA_EXCEEDED", "INVALID_ARGUMENT")


def _upper_many(text: str) -> str:
    """2,000 upper() calls of a 1 MB value in one row (100 per greatest/max, 20 columns)."""
    backend_max = "max" if "zeroblob" in text else "greatest"
    column = f"length({backend_max}(" + ", ".join(["upper(x)"] * 100) + "))"
    return f"WITH a(x) AS (SELECT {text}) SELECT " + ", ".join([column] * 20) + " FROM a"


# Work done inside one function call (or between two checks of SQLite's progress handler),
# which neither the progress handler nor sqlite3_interrupt can stop: each must still end within
# the limit with a coded error. On SQLite the worker running it is killed at the deadline. Run
# to completion, each SQLite case takes well over ten seconds (the values are above the default
# value limit, hence the test's larger one), so the time bound tells stopped work from
# unstopped work even on a loaded machine.
ONE_CALL_VALUE_BYTES = 16 * 1024 * 1024
PAST_THE_CHECKS = {
    "sqlite": [
        "SELECT instr(hex(zeroblob(750000)) || 'b', hex(zeroblob(375000)) || 'b')",
        "SELECT length(replace(hex(zeroblob(750000)), hex(zeroblob(375000)) || 'b', 'x'))",
        "SELECT instr(zeroblob(1500000), CAST(CAST(zeroblob(750000) AS TEXT) || char(1) AS BLOB))",
        "SELECT hex(zeroblob(300000)) LIKE '%' || hex(zeroblob(14998)) || 'b%'",
        "SELECT hex(zeroblob(300000)) GLOB '*' || hex(zeroblob(14998)) || 'b*'",
        _upper_many("hex(zeroblob(5000000))"),
    ],
    "postgres": [
        "SELECT repeat('a', 500000) LIKE '%' || repeat('a', 250000) || 'b%'",
        "SELECT repeat('a', 500000) ILIKE '%' || repeat('a', 250000) || 'b%'",
        "SELECT repeat('a', 500000) SIMILAR TO '%' || repeat('a', 250000) || 'b%'",
        "SELECT repeat('a', 500000) ~~ ('%' || repeat('a', 250000) || 'b%')",
        "SELECT length(repeat('xxxxxxxxxx', 100000000))",
        "SELECT length(lpad('x', 260000000, 'é'))",
    ],
}


@pytest.mark.parametrize("case", range(6))
def test_work_inside_one_call_ends_within_the_limit(
    make_store: MakeStore, scopes: Scopes, case: int
) -> None:
    store, alice = make_store(), scopes("alice")
    backend = "sqlite" if isinstance(store, SqliteStore) else "postgres"
    if backend == "sqlite":
        store = make_store(max_value_bytes=ONE_CALL_VALUE_BYTES)
    started = time.monotonic()
    with pytest.raises((QuotaExceeded, InvalidArgument)) as caught:
        store.query_sync(alice, PAST_THE_CHECKS[backend][case], None)
    elapsed = time.monotonic() - started
    assert elapsed < 5, f"took {elapsed:.1f} s under a 0.3 s limit"
    assert caught.value.code in ("QUOTA_EXCEEDED", "INVALID_ARGUMENT")
    # The store still answers at once afterwards (a killed worker was replaced).
    assert store.query_sync(alice, "SELECT 1", None).rows == [[1]]


def test_a_write_stopped_inside_one_call_changes_nothing(
    make_store: MakeStore, scopes: Scopes
) -> None:
    store, alice = make_store(), scopes("alice")
    sqlite = isinstance(store, SqliteStore)
    if sqlite:
        store = make_store(max_value_bytes=ONE_CALL_VALUE_BYTES)
    make_notes(store, alice)
    store.execute_sync(alice, [SqlStatement("INSERT INTO notes (body) VALUES ('kept')")])
    # SQLite: one instr() call its progress handler cannot stop (the worker is killed; run to
    # its end it takes over ten seconds); PostgreSQL: a long statement its timeout stops (the
    # one-call builders are refused).
    slow = (
        "INSERT INTO notes (body) " + PAST_THE_CHECKS["sqlite"][0]
        if sqlite
        else "INSERT INTO notes (body) SELECT count(*) FROM generate_series(1, 1000000000000)"
    )
    started = time.monotonic()
    with pytest.raises(QuotaExceeded) as caught:
        store.execute_sync(
            alice,
            [
                SqlStatement("INSERT INTO notes (body) VALUES ('new')"),
                SqlStatement("CREATE TABLE more (a INTEGER)"),
                SqlStatement(slow),
            ],
        )
    assert time.monotonic() - started < 5
    assert caught.value.details["limit"] == "statementTimeoutMs"
    assert caught.value.details["statement"] == 2
    assert store.query_sync(alice, "SELECT body FROM notes", None).rows == [["kept"]]
    with pytest.raises(InvalidArgument, match="no such table"):
        store.query_sync(alice, "SELECT count(*) FROM more", None)
    # The file's writer lock was released: the next write goes through at once.
    store.execute_sync(alice, [SqlStatement("INSERT INTO notes (body) VALUES ('after')")])
    assert count(store, alice) == 2


def _databases(store: Store) -> list[DatabaseInfo]:
    if isinstance(store, PostgresStore):
        return store.admin.databases()
    return files.list_databases(store.root)


def test_a_repeated_query_survives_a_schema_change(make_store: MakeStore, scopes: Scopes) -> None:
    store, alice = make_store(), scopes("alice")
    store.execute_sync(
        alice,
        [SqlStatement("CREATE TABLE w (a INTEGER)"), SqlStatement("INSERT INTO w VALUES (1)")],
    )
    for _ in range(6):  # more than any driver's threshold for preparing a repeated text
        assert store.query_sync(alice, "SELECT * FROM w", None).columns == ["a"]
    store.execute_sync(alice, [SqlStatement("ALTER TABLE w ADD COLUMN b INTEGER")])
    for _ in range(2):
        assert store.query_sync(alice, "SELECT * FROM w", None).rows == [[1, None]]
