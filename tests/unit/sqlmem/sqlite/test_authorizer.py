"""Layer 2 on its own: forbidden statements run straight on a hardened connection, with no
validator in front, are denied by the authorizer and the connection limits."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest.sqlmem.sqlite.authorizer import (
    Mode,
    check_new_views,
    deadline,
    harden,
    install,
    result_width,
    trusted,
)


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    c = sqlite3.connect(tmp_path / "scope.db", isolation_level=None)
    harden(c)
    c.execute("PRAGMA journal_mode=WAL").fetchall()
    c.execute("CREATE TABLE t (a)")
    c.execute("INSERT INTO t VALUES (1)")
    yield c
    c.close()


def denied(c: sqlite3.Connection, sql: str) -> bool:
    try:
        c.execute(sql).fetchall()
    except sqlite3.DatabaseError:
        return True
    return False


FORBIDDEN_ALWAYS = [
    "ATTACH DATABASE '{tmp}/evil.db' AS evil",
    "ATTACH ':memory:' AS m",
    "DETACH DATABASE main",
    "VACUUM",
    "VACUUM INTO '{tmp}/copy.db'",
    "PRAGMA writable_schema = 1",
    "PRAGMA user_version = 7",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA table_info(t)",
    "SELECT * FROM pragma_table_info('t')",
    "SELECT * FROM pragma_database_list",
    'SELECT * FROM main."PRAGMA_Database_List"',
    "SELECT * FROM dbstat",
    "SELECT * FROM sqlite_stmt",
    "BEGIN",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT s1",
    "RELEASE s1",
    "SELECT load_extension('{tmp}/evil.so')",
    "SELECT LOAD_EXTENSION('{tmp}/evil.so')",
    "SELECT \"load_extension\"('{tmp}/evil.so')",
    "SELECT [load_extension]('{tmp}/evil.so')",
    "SELECT sqlite_compileoption_used('THREADSAFE')",
    "ANALYZE",
    "CREATE TEMP TABLE tt (a)",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM t; END",
    "CREATE VIRTUAL TABLE v USING fts5(x)",
]

FORBIDDEN_IN_READ = [
    "INSERT INTO t VALUES (2)",
    "UPDATE t SET a = 2",
    "DELETE FROM t",
    "CREATE TABLE u (a)",
    "DROP TABLE t",
    "ALTER TABLE t RENAME TO u",
    "CREATE INDEX i ON t (a)",
]


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("template", FORBIDDEN_ALWAYS)
def test_denied_in_every_mode(
    conn: sqlite3.Connection, tmp_path: Path, mode: Mode, template: str
) -> None:
    sql = template.format(tmp=tmp_path)
    install(conn, mode)
    assert denied(conn, sql)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "scope.db",
        "scope.db-shm",
        "scope.db-wal",
    ]
    install(conn, Mode.READ)
    assert conn.execute("SELECT a FROM t").fetchall() == [(1,)]
    with trusted(conn, install(conn, Mode.READ)):
        assert conn.execute("PRAGMA user_version").fetchone() == (0,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        names = conn.execute("SELECT name FROM sqlite_master ORDER BY name").fetchall()
    assert names == [("t",)]


@pytest.mark.parametrize("sql", FORBIDDEN_IN_READ)
def test_read_mode_only_reads(conn: sqlite3.Connection, sql: str) -> None:
    install(conn, Mode.READ)
    assert denied(conn, sql)
    install(conn, Mode.WRITE)
    assert not denied(conn, sql)


def test_the_denial_is_recorded_for_the_message(conn: sqlite3.Connection) -> None:
    guard = install(conn, Mode.WRITE)
    assert denied(conn, "SELECT LOAD_EXTENSION('x')")
    assert guard.denied == "function load_extension()"
    assert denied(conn, "PRAGMA user_version = 1")
    assert guard.denied == "PRAGMA"


def test_allowed_work_runs(conn: sqlite3.Connection) -> None:
    install(conn, Mode.WRITE)
    conn.execute("CREATE TABLE u (id INTEGER PRIMARY KEY, doc TEXT)")
    conn.execute("INSERT INTO u (doc) VALUES (json_object('k', upper('v')))")
    conn.execute("CREATE INDEX u_doc ON u (doc)")
    conn.execute("ALTER TABLE u ADD COLUMN n INTEGER DEFAULT 0")
    install(conn, Mode.READ)
    rows = conn.execute(
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) "
        "SELECT json_extract(doc, '$.k'), (SELECT sum(n) FROM c) FROM u"
    ).fetchall()
    assert rows == [("V", 6)]
    assert conn.execute("SELECT value FROM json_each('[1,2]')").fetchall() == [(1,), (2,)]


def test_a_statement_cached_under_trust_is_checked_again(conn: sqlite3.Connection) -> None:
    guard = install(conn, Mode.WRITE)
    with trusted(conn, guard):
        conn.execute("PRAGMA user_version").fetchall()  # now in the statement cache
    assert denied(conn, "PRAGMA user_version")
    # and a write prepared in write mode does not run from the cache in read mode
    conn.execute("INSERT INTO t VALUES (5)")
    install(conn, Mode.READ)
    assert denied(conn, "INSERT INTO t VALUES (5)")


def test_attach_fails_on_the_limit_even_without_the_authorizer(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    conn.set_authorizer(None)
    with pytest.raises(sqlite3.OperationalError, match="too many attached databases"):
        conn.execute(f"ATTACH '{tmp_path}/evil.db' AS evil")
    assert not (tmp_path / "evil.db").exists()


def test_a_long_value_hits_the_length_limit(conn: sqlite3.Connection) -> None:
    install(conn, Mode.READ)
    with pytest.raises(sqlite3.DataError):
        conn.execute("SELECT zeroblob(100 * 1024 * 1024)").fetchall()


def test_no_value_over_one_mib_is_built_by_default(conn: sqlite3.Connection) -> None:
    install(conn, Mode.READ)
    assert conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 1024 * 1024
    for sql in ("SELECT zeroblob(1048577)", "SELECT randomblob(1048577)"):
        with pytest.raises(sqlite3.DataError, match="too big"):
            conn.execute(sql).fetchall()
    assert conn.execute("SELECT length(zeroblob(1048576))").fetchall() == [(1048576,)]


def test_a_view_over_a_pragma_is_refused_by_the_authorizer_alone(
    conn: sqlite3.Connection,
) -> None:
    """No validator, and trusted_schema left ON: only the authorizer stands in the way."""
    guard = install(conn, Mode.WRITE)
    conn.execute("CREATE VIEW fine AS SELECT a FROM t")
    conn.execute("CREATE VIEW v AS SELECT * FROM pragma_database_list")
    with pytest.raises(sqlite3.DatabaseError, match=r"pragma_database_list\.seq is prohibited"):
        check_new_views(conn, guard)
    assert guard.denied == "table pragma_database_list"
    assert guard.created_views == []
    # and a view that got in some other way cannot be read
    install(conn, Mode.READ)
    assert denied(conn, "SELECT * FROM v")
    assert conn.execute("SELECT * FROM fine").fetchall() == [(1,)]


def test_the_result_width_is_known_without_running_the_statement(
    conn: sqlite3.Connection,
) -> None:
    install(conn, Mode.READ)
    forever = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
    forever += "SELECT count(*), 2, 3 FROM c"
    assert result_width(conn, forever, ()) == 3
    assert result_width(conn, "-- c\nSELECT a, ? FROM t UNION SELECT 1, 2;", (5,)) == 2
    assert result_width(conn, "SELECT * FROM t", ()) == 1


def test_the_deadline_stops_a_runaway_query_in_time(conn: sqlite3.Connection) -> None:
    install(conn, Mode.READ)
    started = time.monotonic()
    with deadline(conn, 200), pytest.raises(sqlite3.OperationalError, match="interrupted"):
        conn.execute(
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"
        ).fetchall()
    assert time.monotonic() - started < 1.0
    assert conn.execute("SELECT 1").fetchall() == [(1,)]  # the handler is gone afterwards
