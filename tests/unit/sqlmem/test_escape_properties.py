"""Property: statements mixing allowed and forbidden constructs never make anything forbidden
happen, through the whole store (both layers) or straight on a hardened connection (layer 2
alone). After every example: no new file anywhere, the other scope's database unchanged, and
the attacker's own database still has its settings and no trigger, virtual or temp object."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.errors import PalimpsestError
from palimpsest.identity import Scope
from palimpsest.sqlmem import SqliteStore, SqlStatement
from palimpsest.sqlmem.sqlite.authorizer import Mode, harden, install, trusted
from tests.unit.principals import scope_ref

ATTACKER = scope_ref("acme", Scope.USER, "mallory")
VICTIM = scope_ref("acme", Scope.USER, "victim")

FORBIDDEN = [
    "ATTACH DATABASE '{evil}' AS evil",
    "attach '{victim}' as v",
    "DETACH DATABASE main",
    "VACUUM",
    "VACUUM INTO '{evil}'",
    "PRAGMA user_version = 7",
    "pragma journal_mode = delete",
    "PRAGMA writable_schema = 1",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT sp",
    "RELEASE sp",
    "END",
    "SELECT load_extension('{evil}')",
    "SELECT \"load_extension\"('{evil}')",
    "SELECT [LOAD_EXTENSION]('{evil}')",
    "SELECT `load_extension` ('{evil}')",
    "SELECT writefile('{evil}', 'x')",
    "SELECT readfile('{victim}')",
    "CREATE TRIGGER tr AFTER INSERT ON notes BEGIN DELETE FROM notes; END",
    "CREATE TEMP TABLE tmp_t (a)",
    "CREATE VIRTUAL TABLE vt USING fts5(a)",
    "SELECT * FROM pragma_table_info('notes')",
    "INSERT INTO v.notes (body) VALUES ('pwned')",
    "DELETE FROM v.notes",
    "ANALYZE",
]
ALLOWED = [
    "SELECT * FROM notes",
    "SELECT 'load_extension(' || 'ATTACH DATABASE'",
    "INSERT INTO notes (body) VALUES ('ATTACH DATABASE x AS y; PRAGMA z')",
    "UPDATE notes SET body = upper(body)",
    "DELETE FROM notes WHERE id > 50",
    "CREATE TABLE IF NOT EXISTS extra (a)",
    "WITH c AS (SELECT 1 AS x) SELECT x FROM c",
]
GLUE = [" ; ", ";", ";\n", "\n", " ", " /* ", " */ ", " -- ", "\n-- note\n", "/**/", " UNION ALL "]

pieces = st.lists(st.sampled_from(FORBIDDEN + ALLOWED), min_size=1, max_size=3)
statements = st.builds(
    lambda ps, glue, lead, tail: lead + glue.join(ps) + tail,
    pieces,
    st.sampled_from(GLUE),
    st.sampled_from(["", "/* hi */ ", "-- x\n", " "]),
    st.sampled_from(["", ";", "; -- done", " /* end */"]),
)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[SqliteStore, Path]]:
    monkeypatch.chdir(tmp_path)  # relative paths an attack might name land here
    store = SqliteStore(tmp_path / "sql", max_rows=50, timeout_ms=500, max_bytes=1024 * 1024)
    for who in (ATTACKER, VICTIM):
        store.execute_sync(
            who,
            [
                SqlStatement("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"),
                SqlStatement("INSERT INTO notes (body) VALUES ('secret')"),
            ],
        )
    yield store, tmp_path
    store.close()


def snapshot(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as c:
        rows = c.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        return rows + c.execute("SELECT * FROM notes ORDER BY id").fetchall()


def file_names(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def check_invariants(store: SqliteStore, root: Path, before: list[tuple[object, ...]]) -> None:
    allowed = {"sql"} | {
        f"sql/{who.scope_key}{suffix}"
        for who in (ATTACKER, VICTIM)
        for suffix in (".db", ".db-wal", ".db-shm", ".json")
    }
    assert file_names(root) <= allowed
    assert snapshot(store.root / f"{VICTIM.scope_key}.db") == before
    with sqlite3.connect(store.root / f"{ATTACKER.scope_key}.db") as c:
        assert c.execute("PRAGMA user_version").fetchone() == (0,)
        assert c.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        kinds = c.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' OR sql LIKE '%VIRTUAL%'"
        ).fetchone()
        assert kinds == (0,)


def render(sql: str, store: SqliteStore, root: Path) -> str:
    return sql.format(evil=root / "evil.db", victim=store.root / f"{VICTIM.scope_key}.db")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sql=statements, as_query=st.booleans())
def test_nothing_forbidden_runs_through_the_store(
    world: tuple[SqliteStore, Path], sql: str, as_query: bool
) -> None:
    store, root = world
    before = snapshot(store.root / f"{VICTIM.scope_key}.db")
    text = render(sql, store, root)
    try:
        if as_query:
            store.query_sync(ATTACKER, text, None)
        else:
            store.execute_sync(ATTACKER, [SqlStatement(text)])
    except PalimpsestError:
        pass  # refusals are expected; any other exception type fails the test
    check_invariants(store, root, before)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sql=statements, mode=st.sampled_from(list(Mode)), script=st.booleans())
def test_nothing_forbidden_runs_on_the_bare_guarded_connection(
    world: tuple[SqliteStore, Path], sql: str, mode: Mode, script: bool
) -> None:
    store, root = world
    before = snapshot(store.root / f"{VICTIM.scope_key}.db")
    text = render(sql, store, root)
    conn = sqlite3.connect(store.root / f"{ATTACKER.scope_key}.db", isolation_level=None)
    try:
        harden(conn)
        guard = install(conn, mode)
        with contextlib.suppress(sqlite3.Error):
            # executescript even runs ';'-chains: every statement still meets the authorizer.
            conn.executescript(text) if script else conn.execute(text).fetchall()
        with trusted(conn, guard):
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    finally:
        conn.close()
    check_invariants(store, root, before)
