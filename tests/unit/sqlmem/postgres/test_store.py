"""PostgreSQL store specifics: several stores (as several API replicas) on one database."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from psycopg import sql

from palimpsest.errors import InvalidArgument, QuotaExceeded
from palimpsest.sqlmem import SqlStatement
from palimpsest.sqlmem.postgres.admin import role_password
from palimpsest.sqlmem.postgres.store import PostgresStore
from tests.unit.sqlmem.conftest import Scopes

pytestmark = pytest.mark.postgres


def replica(pg_conninfo: dict[str, Any]) -> PostgresStore:
    store = PostgresStore(
        pg_conninfo,
        max_rows=10,
        timeout_ms=20_000,
        max_bytes=0,
        max_value_bytes=1024,
        max_result_bytes=1024 * 1024,
        max_columns=10,
    )
    store.prepare()
    return store


def test_replicas_provision_many_new_scopes_at_once(
    pg_conninfo: dict[str, Any], scopes: Scopes
) -> None:
    """First writes of different scopes on two replicas at the same moment all succeed (each
    grants its role CONNECT on the one database row: they must take turns)."""
    stores = [replica(pg_conninfo), replica(pg_conninfo)]
    owners = [scopes(f"u{i}") for i in range(12)]
    try:

        def first_write(i: int) -> list[list[Any]]:
            store, who = stores[i % 2], owners[i]
            store.execute_sync(
                who,
                [
                    SqlStatement("CREATE TABLE t (a INTEGER)"),
                    SqlStatement("INSERT INTO t VALUES (?)", [i]),
                ],
            )
            return stores[(i + 1) % 2].query_sync(who, "SELECT a FROM t", None).rows

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(first_write, range(12)))
        assert answers == [[[i]] for i in range(12)]
    finally:
        for store in stores:
            store.close()


def test_a_scope_under_the_unkeyed_names_is_renamed_when_replicas_start(
    pg_conninfo: dict[str, Any], scopes: Scopes
) -> None:
    """A scope made by an earlier version (schema and role named by the bare scope key) is
    renamed to its keyed names by the first replica to start, once, with its data and a role
    the store can log in as; the old names are gone."""
    who = scopes("legacy")
    key = who.scope_key
    old_role, old_schema = f"sqlmem_r_{key}", f"sqlmem_s_{key}"
    replica(pg_conninfo).close()  # the database is hardened, as an earlier version left it
    with psycopg.connect(**pg_conninfo, autocommit=True) as admin, admin.transaction():
        role, schema = sql.Identifier(old_role), sql.Identifier(old_schema)
        password = role_password(pg_conninfo["password"], old_role)
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN NOINHERIT PASSWORD {}").format(
                role, sql.Literal(password)
            )
        )
        admin.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(role, schema))
        admin.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                sql.Identifier(pg_conninfo["dbname"]), role
            )
        )
        admin.execute(sql.SQL("GRANT USAGE, CREATE ON SCHEMA {} TO {}").format(schema, role))
        admin.execute(sql.SQL("CREATE TABLE {}.notes (body text)").format(schema))
        admin.execute(sql.SQL("ALTER TABLE {}.notes OWNER TO {}").format(schema, role))
        admin.execute(sql.SQL("INSERT INTO {}.notes VALUES ('kept')").format(schema))
        admin.execute(
            "INSERT INTO sqlmem_admin.databases (key, tenant_id, scope, owner_id) "
            "VALUES (%s, %s, %s, %s)",
            [key, who.tenant_id, who.scope.value, who.owner_id],
        )
    with ThreadPoolExecutor(max_workers=3) as pool:  # several replicas start at once
        stores = list(pool.map(lambda _: replica(pg_conninfo), range(3)))
    try:
        store = stores[0]
        new_role, new_schema = store.admin.role_name(key), store.admin.schema_name(key)
        assert (new_role, new_schema) != (old_role, old_schema)
        assert store.query_sync(who, "SELECT body FROM notes", None).rows == [["kept"]]
        stores[1].execute_sync(who, [SqlStatement("INSERT INTO notes VALUES ('after')")])
        assert stores[2].query_sync(who, "SELECT count(*) FROM notes", None).rows == [[2]]
        listed = {d.key: d for d in store.admin.databases()}
        assert listed[key].owner_id == who.owner_id
        with psycopg.connect(**pg_conninfo, autocommit=True) as admin:
            schemas = admin.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname = ANY(%s)",
                [[old_schema, new_schema]],
            ).fetchall()
            roles = admin.execute(
                "SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", [[old_role, new_role]]
            ).fetchall()
        assert schemas == [(new_schema,)]
        assert roles == [(new_role,)]
    finally:
        for s in stores:
            s.close()


def test_names_are_keyed_and_every_replica_derives_the_same(
    pg_conninfo: dict[str, Any], scopes: Scopes
) -> None:
    """Nobody can compute a scope's schema or role from its (public) scope key."""
    first, second = replica(pg_conninfo), replica(pg_conninfo)
    try:
        key = scopes("someone").scope_key
        assert first.admin.schema_name(key) == second.admin.schema_name(key)
        assert key not in first.admin.schema_name(key) + first.admin.role_name(key)
        assert (
            first.admin.schema_name(key)[len("sqlmem_s_") :]
            == (first.admin.role_name(key)[len("sqlmem_r_") :])
        )
    finally:
        first.close()
        second.close()


def test_a_timeout_while_leaving_pipeline_mode_is_the_timeout() -> None:
    """psycopg raises "cannot exit pipeline mode while busy" (no SQLSTATE) while handling the
    server's statement timeout; the answer is the timeout, not "connection lost"."""
    from psycopg import errors

    from palimpsest.errors import QuotaExceeded
    from palimpsest.sqlmem.postgres.errors import translate
    from palimpsest.sqlmem.sqlite.translate import Failure

    try:
        try:
            raise errors.QueryCanceled("canceling statement due to statement timeout")
        except psycopg.Error:
            raise psycopg.OperationalError("cannot exit pipeline mode while busy") from None
    except psycopg.OperationalError as busy:
        failure = Failure(None, 0, 310, 300, 0, None, 1024)
        answer = translate(busy, failure)
    assert isinstance(answer, QuotaExceeded)
    assert answer.details["limit"] == "statementTimeoutMs"


def test_a_statement_over_the_temp_file_limit_is_a_limit_not_a_busy_server(
    pg_conninfo: dict[str, Any], scopes: Scopes
) -> None:
    """generate_series materialises its rows; past temp_file_limit (SQLSTATE 53400) a retry
    fails the same way, so the answer names the limit instead of asking for a retry."""
    from palimpsest.errors import QuotaExceeded

    store = replica(pg_conninfo)  # a 20 s time limit: the temp files fill first
    try:
        with pytest.raises(QuotaExceeded, match="temporary files") as caught:
            store.query_sync(
                scopes("big"), "SELECT count(*) FROM generate_series(1, 1000000000000)", None
            )
        assert caught.value.details["limit"] == "sqlTempFileBytes"
    finally:
        store.close()


LONG = "%" + "a" * 1000 + "%"  # one character over the pattern limit


@pytest.mark.parametrize(
    ("statement", "args"),
    [
        ("SELECT 'x' LIKE ('%' || ?)", ["a"]),  # the pattern is computed
        ("SELECT 'x' ~~* lower(?)", ["a"]),
        ("SELECT 'x' NOT SIMILAR TO 'a' || 'b'", None),
        ("SELECT 'x' LIKE ANY (ARRAY['a', 'b'])", None),
        (f"SELECT 'x' LIKE '{LONG}'", None),
        ("SELECT ? AS a, 'x' LIKE ? AS b, ? AS c", ["short", LONG, "short"]),
        ("SELECT 'x' ILIKE :p AS b", {"p": LONG}),
        ("SELECT repeat('x', ?)", [100000000]),
        ("SELECT length(repeat(repeat('x', 1000), 2000))", None),
        ("SELECT length(rpad('x', 2000000, 'ab'))", None),
    ],
)
def test_patterns_and_builders_that_run_past_the_timeout_are_refused(
    pg_conninfo: dict[str, Any], scopes: Scopes, statement: str, args: Any
) -> None:
    store = replica(pg_conninfo)  # a 20 s limit: only a refusal ends these at once
    try:
        with pytest.raises((InvalidArgument, QuotaExceeded)):
            store.query_sync(scopes("alice"), statement, args)
    finally:
        store.close()


def test_literal_and_bound_patterns_within_the_limit_run(
    pg_conninfo: dict[str, Any], scopes: Scopes
) -> None:
    store, alice, short = replica(pg_conninfo), scopes("alice"), "%" + "a" * 998 + "%"
    try:
        # A long value beside a pattern is not a pattern.
        assert store.query_sync(alice, "SELECT ?, 'xa' LIKE ?", ["x" * 900, short]).rows == [
            ["x" * 900, False]
        ]
        assert store.query_sync(alice, "SELECT 'A' ILIKE :p", {"p": "a%"}).rows == [[True]]
        assert store.query_sync(alice, f"SELECT 'x' ~~ '{short}'", None).rows == [[False]]
        lpad = "SELECT length(lpad('x', 500, 'é'))"
        assert store.query_sync(alice, lpad, None).rows == [[500]]
    finally:
        store.close()
