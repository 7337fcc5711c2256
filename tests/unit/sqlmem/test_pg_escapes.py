"""PostgreSQL: statements mixing allowed and forbidden constructs never make anything forbidden
happen, through the whole store (both layers) or on a bare connection as the scope's role with
no validator at all (layer 2 alone, simple protocol, so even ';' chains run). After every
example, seen as the admin: the victim's schema unchanged, no schema, role, extension, large
object or table outside the scope schemas, no file written, the attacker still a plain role."""

from __future__ import annotations

import contextlib
import functools
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument, PalimpsestError, QuotaExceeded
from palimpsest.identity import Scope
from palimpsest.local.postgres import conninfo
from palimpsest.sqlmem import SqlStatement
from palimpsest.sqlmem.postgres.admin import Admin, role_password
from palimpsest.sqlmem.postgres.store import PostgresStore
from tests.unit.principals import scope_ref

pytestmark = pytest.mark.postgres

TENANT = f"t-{uuid.uuid4().hex[:10]}"
ATTACKER = scope_ref(TENANT, Scope.USER, "mallory")
VICTIM = scope_ref(TENANT, Scope.USER, "victim")
PWNED = Path("/tmp") / f"palimpsest-pwned-{uuid.uuid4().hex[:8]}"


@functools.cache
def _names() -> Admin:
    """The keyed names, as every store derives them; made on first use, so collecting this
    module needs no PostgreSQL set up (`make check` deselects it)."""
    return Admin(conninfo(Settings()), timeout_ms=1000)


def role_name(key: str) -> str:
    return _names().role_name(key)


def schema_name(key: str) -> str:
    return _names().schema_name(key)


FORBIDDEN = [
    "COPY notes TO '{pwned}'",
    "COPY notes FROM PROGRAM 'touch {pwned}'",
    "COPY (SELECT 1) TO PROGRAM 'touch {pwned}'",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_ls_dir('.')",
    "SELECT * FROM {victim}.notes",
    "DELETE FROM {victim}.notes",
    "INSERT INTO {victim}.notes (body) VALUES ('pwned')",
    "SET ROLE palimpsest",
    "SET SESSION AUTHORIZATION palimpsest",
    "SET search_path = {victim}",
    "SELECT set_config('search_path', '{victim}', false)",
    "SELECT current_setting('data_directory')",
    "SELECT name, setting FROM pg_settings",
    "SELECT query FROM pg_stat_activity",
    "SELECT relname FROM pg_class",
    "SELECT nspname FROM pg_catalog.pg_namespace",
    "CREATE EXTENSION dblink",
    "CREATE EXTENSION file_fdw",
    "SELECT lo_import('/etc/passwd')",
    "SELECT lo_from_bytea(0, 'x')",
    "CREATE TABLE public.pwned (a int)",
    "CREATE SCHEMA pwned",
    "CREATE ROLE pwned",
    "CREATE TEMP TABLE tmp_t (a int)",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    "DO 'BEGIN NULL; END'",
    "DROP SCHEMA {own} CASCADE",
    "ALTER SCHEMA {own} RENAME TO pwned",
    "SELECT query_to_xml('select 1', true, true, '')",
    "CREATE VIEW leak AS SELECT relname FROM pg_class",
    "SELECT pg_notify('c', 'x')",
    "SELECT pg_advisory_lock(1)",
    "SELECT key FROM sqlmem_admin.databases",
    "GRANT ALL ON notes TO PUBLIC",
    "SELECT version()",
    "LOAD 'plpgsql'",
]
ALLOWED = [
    "SELECT * FROM notes",
    "SELECT 'COPY x TO PROGRAM' || ' SET ROLE'",
    "INSERT INTO notes (body) VALUES ('SET ROLE x; COPY')",
    "UPDATE notes SET body = upper(body)",
    "DELETE FROM notes WHERE id > 50",
    "CREATE TABLE IF NOT EXISTS extra (a int)",
    "WITH c AS (SELECT 1 AS x) SELECT x FROM c",
]
GLUE = [" ; ", ";", ";\n", "\n", " ", " /* ", " */ ", " -- ", "\n-- note\n", " UNION ALL "]

pieces = st.lists(st.sampled_from(FORBIDDEN + ALLOWED), min_size=1, max_size=3)
statements = st.builds(
    lambda ps, glue, lead, tail: lead + glue.join(ps) + tail,
    pieces,
    st.sampled_from(GLUE),
    st.sampled_from(["", "/* hi */ ", "-- x\n", " "]),
    st.sampled_from(["", ";", "; -- done", " /* end */"]),
)


@pytest.fixture(scope="module")
def world(pg_conninfo: dict[str, Any]) -> Iterator[tuple[PostgresStore, psycopg.Connection[Any]]]:
    store = PostgresStore(
        pg_conninfo,
        max_rows=50,
        timeout_ms=500,
        max_bytes=4 * 1024 * 1024,
        max_value_bytes=1024 * 1024,
        max_result_bytes=1024 * 1024,
        max_columns=100,
    )
    store.prepare()
    for who in (ATTACKER, VICTIM):
        store.execute_sync(
            who,
            [
                SqlStatement("CREATE TABLE notes (id serial PRIMARY KEY, body text)"),
                SqlStatement("INSERT INTO notes (body) VALUES ('secret')"),
            ],
        )
    admin = psycopg.connect(**pg_conninfo, autocommit=True)
    try:
        yield store, admin
    finally:
        admin.close()
        for who in (ATTACKER, VICTIM):
            store.erase_sync(who.scope_key)
        store.close()


def snapshot(admin: psycopg.Connection[Any]) -> dict[str, Any]:
    def rows(query: str, *args: Any) -> list[tuple[Any, ...]]:
        return admin.execute(query, list(args) or None).fetchall()

    victim = schema_name(VICTIM.scope_key)
    return {
        "victim": rows(f"SELECT id, body FROM {victim}.notes ORDER BY id")
        + rows(
            "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = relnamespace "
            "WHERE nspname = %s ORDER BY relname",
            victim,
        ),
        "schemas": rows(
            "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'sqlmem_s_%' "
            "AND nspname NOT LIKE 'pg_%temp%' ORDER BY 1"
        ),
        "roles": rows(
            "SELECT rolname FROM pg_roles WHERE rolname NOT LIKE 'sqlmem_r_%' ORDER BY 1"
        ),
        "extensions": rows("SELECT extname FROM pg_extension ORDER BY 1"),
        "large_objects": rows("SELECT count(*) FROM pg_largeobject_metadata"),
        "public": rows("SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"),
        "attacker": rows(
            "SELECT rolsuper, rolcreaterole, rolcreatedb, rolinherit, rolbypassrls, "
            "(SELECT count(*) FROM pg_auth_members WHERE member = r.oid) FROM pg_roles r "
            "WHERE rolname = %s",
            role_name(ATTACKER.scope_key),
        ),
        "own_schema": rows(
            "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s",
            schema_name(ATTACKER.scope_key),
        ),
        "functions": rows(
            "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE nspname LIKE 'sqlmem_s_%'"
        ),
    }


def render(sql: str) -> str:
    return sql.format(
        pwned=PWNED, victim=schema_name(VICTIM.scope_key), own=schema_name(ATTACKER.scope_key)
    )


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sql=statements, as_query=st.booleans())
def test_nothing_forbidden_runs_through_the_store(
    world: tuple[PostgresStore, psycopg.Connection[Any]], sql: str, as_query: bool
) -> None:
    store, admin = world
    before = snapshot(admin)
    try:
        if as_query:
            store.query_sync(ATTACKER, render(sql), None)
        else:
            store.execute_sync(ATTACKER, [SqlStatement(render(sql))])
    except PalimpsestError:
        pass  # refusals are expected; any other exception type fails the test
    assert snapshot(admin) == before
    assert not PWNED.exists()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sql=statements)
def test_nothing_forbidden_runs_on_a_bare_connection_as_the_scope_role(
    world: tuple[PostgresStore, psycopg.Connection[Any]], sql: str, pg_conninfo: dict[str, Any]
) -> None:
    """Layer 2 alone: the role's own privileges, with every statement of a ';' chain run."""
    _, admin = world
    before = snapshot(admin)
    role = role_name(ATTACKER.scope_key)
    with (
        psycopg.connect(
            **{
                **pg_conninfo,
                "user": role,
                "password": role_password(pg_conninfo["password"], role),
            },
            autocommit=True,
        ) as conn,
        contextlib.suppress(psycopg.Error),
    ):
        conn.execute("SET statement_timeout = 500")
        conn.execute(render(sql))  # simple query protocol: a ';' chain runs statement by statement
    assert snapshot(admin) == before
    assert not PWNED.exists()


def test_layer_two_alone_refuses_what_layer_one_would(
    world: tuple[PostgresStore, psycopg.Connection[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the validator out of the way, the store still refuses through PostgreSQL."""
    import palimpsest.sqlmem.postgres.store as pg_store_module
    from palimpsest.sqlmem.postgres.validator import PgChecked
    from palimpsest.sqlmem.sqlite.validator import Kind

    store, admin = world
    monkeypatch.setattr(
        pg_store_module, "check_exec", lambda sql: PgChecked(sql, Kind.INSERT, None, 0)
    )
    monkeypatch.setattr(
        pg_store_module, "check_query", lambda sql: PgChecked(sql, Kind.SELECT, None, 0)
    )
    victim = schema_name(VICTIM.scope_key)
    for sql in (
        f"SELECT * FROM {victim}.notes",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT relname FROM pg_class",
        "SELECT current_setting('port')",
    ):
        with pytest.raises(InvalidArgument, match="refused by PostgreSQL"):
            store.query_sync(ATTACKER, sql, None)
    with pytest.raises(InvalidArgument, match="read-only"):
        store.query_sync(ATTACKER, "SELECT nextval('notes_id_seq')", None)
    with pytest.raises(InvalidArgument, match="multiple commands"):
        store.execute_sync(
            ATTACKER, [SqlStatement("UPDATE notes SET body = 'x'; DELETE FROM notes")]
        )
    with pytest.raises(InvalidArgument) as caught:
        store.execute_sync(
            ATTACKER,
            [
                SqlStatement("INSERT INTO notes (body) VALUES ('kept?')"),
                SqlStatement(f"DELETE FROM {victim}.notes"),
            ],
        )
    assert caught.value.details["statement"] == 1
    assert store.query_sync(ATTACKER, "SELECT count(*) FROM notes", None).rows[0][0] >= 1
    assert snapshot(admin)["victim"][0] == (1, "secret")


def test_a_role_that_changed_its_own_defaults_is_still_held(
    world: tuple[PostgresStore, psycopg.Connection[Any]], pg_conninfo: dict[str, Any]
) -> None:
    """A role may ALTER ROLE itself (layer 1 refuses it); the store sets the time limit in every
    transaction and restores a changed password."""
    store, _ = world
    role = role_name(ATTACKER.scope_key)
    with psycopg.connect(
        **{**pg_conninfo, "user": role, "password": role_password(pg_conninfo["password"], role)},
        autocommit=True,
    ) as conn:
        conn.execute(f'ALTER ROLE "{role}" SET statement_timeout = 0')
        conn.execute(f"ALTER ROLE \"{role}\" PASSWORD 'changed-by-the-agent'")
    store.close()  # no pooled connection: the next call must log in again
    forever = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"
    )
    with pytest.raises(QuotaExceeded, match="statement timeout of 500 ms"):
        store.query_sync(ATTACKER, forever, None)
    assert store.query_sync(ATTACKER, "SELECT body FROM notes ORDER BY id LIMIT 1", None).rows


ORACLES = [
    "SELECT '{name}'::regnamespace",
    "SELECT CAST('{name}' AS regnamespace)",
    "SELECT cast('{name}' as RegNamespace)",
    "SELECT CAST('{name}' AS \"regnamespace\")",
    "SELECT '{role}'::regrole",
    "SELECT '{role}'::pg_catalog.regrole",
    "SELECT '{name}.notes'::regclass",
    "SELECT '{name}.notes'::text::regclass::oid",
    "SELECT '{name}.notes_id_seq'::regclass::text = 'x'",
    "SELECT nextval('{name}.notes_id_seq')",
    "SELECT currval('{name}.notes_id_seq')",
    "SELECT to_regclass('{name}.notes')",
    "SELECT to_regrole('{role}')",
    "SELECT to_regnamespace('{name}')",
    "SELECT has_schema_privilege('{name}', 'USAGE')",
    "SELECT pg_has_role('{role}', 'MEMBER')",
    "SELECT current_setting('search_path')",
    "SELECT count(*) FROM information_schema.schemata WHERE schema_name = '{name}'",
]


@pytest.mark.parametrize("probe", ORACLES)
def test_another_scopes_schema_or_role_cannot_be_told_to_exist(
    world: tuple[PostgresStore, psycopg.Connection[Any]], probe: str
) -> None:
    """The answer for the victim's existing schema and role is the answer for names that
    exist nowhere: a refusal before the statement runs, with the same words."""
    store, _ = world
    answers: list[tuple[str, object]] = []  # ("rows", rows) or (code, message)
    for key in (VICTIM.scope_key, uuid.uuid4().hex):
        sql = probe.format(name=store.admin.schema_name(key), role=store.admin.role_name(key))
        try:
            answers.append(("rows", store.query_sync(ATTACKER, sql, None).rows))
        except PalimpsestError as e:
            answers.append((e.code, str(e).replace(sql, "")))
    assert answers[0] == answers[1]
    if "information_schema" not in probe:
        code, message = answers[0]
        assert code == "INVALID_ARGUMENT"
        assert isinstance(message, str)
        assert "statement refused:" in message
