"""Defence layer 2 on PostgreSQL, and everything done as the admin role.

One database holds every scope. Per scope: a schema ``sqlmem_s_<name>`` (owned by the
admin, so the scope cannot drop or rename it) on which one LOGIN role ``sqlmem_r_<name>``
has USAGE and CREATE, and nothing else anywhere: agent SQL runs on connections authenticated
*as* that role (never ``SET ROLE`` from a stronger one, so there is nothing to return to).
The role's password is HMAC-SHA256(admin password, role name): every replica derives it, none
stores it. ``<name>`` is HMAC-SHA256(naming key, scope key), cut to 32 hex digits: the scope key
is an unkeyed hash of tenant, scope and owner that anyone can compute, so unkeyed names would
let one scope ask the catalogs whether another's schema exists. The naming key is made once,
at random, by the first replica to prepare the database, and kept in ``sqlmem_admin.naming``
(readable by the admin only), so every replica sharing the database derives the same names
with no configuration of its own. Scopes made under the unkeyed names of earlier versions are
renamed to their keyed names when a store prepares the database, or on first write or erasure
(``_migrate``, under the catalog lock, so several replicas starting at once take turns). The
database is hardened once (``harden``; PUBLIC's grants in ``hardening.py``). The roles:

- Roles are NOSUPERUSER, NOCREATEDB, NOCREATEROLE, NOINHERIT, members of nothing; extensions
  need CREATE on the database, ``COPY ... PROGRAM``/files need superuser or pg_* roles,
  ``dblink`` is never installed.
- ``search_path``, ``statement_timeout``, ``idle_in_transaction_session_timeout`` and
  ``temp_file_limit`` are the role's defaults, and the store sets the timeout again in every
  transaction (a role may change its own defaults; layer 1 refuses ``ALTER ROLE``).

The admin's own schema ``sqlmem_admin`` holds the owner registry (for listings) and three
SECURITY DEFINER functions (``definer.py``) the store calls in the scope's transaction:
``begin_write`` (one writer per scope across replicas, and the schema's size),
``schema_bytes`` and ``touch``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql

from palimpsest.errors import InvalidArgument, Unavailable
from palimpsest.identity import Scope, ScopeRef
from palimpsest.sqlmem.core.base import DatabaseInfo
from palimpsest.sqlmem.postgres import hardening
from palimpsest.sqlmem.postgres.hardening import EMPTY_SCHEMA

HARDENING_VERSION = 5
EMPTY_ROLE = "sqlmem_nobody"  # reads of a scope that has no schema yet
TOO_BIG = "PA001"  # SQLSTATE raised by sqlmem_admin.too_big
_KEY = re.compile(r"[0-9a-f]{32}")
# One admin change of roles and grants at a time, across replicas: GRANT/REVOKE ON DATABASE
# rewrite the database's one catalog row, and two at once fail ("tuple concurrently updated").
_LOCK_CATALOG = 7_317_001
_IDLE_IN_TX = "60s"
_NAMING_KEY_BYTES = 32
TEMP_FILES = "256MB"  # temp_file_limit of every scope role


def check_key(key: str) -> str:
    if not _KEY.fullmatch(key):
        raise InvalidArgument("not a valid scope key")
    return key


def role_password(admin_password: str, role: str) -> str:
    return hmac.new(admin_password.encode(), role.encode(), hashlib.sha256).hexdigest()


class Admin:
    """The admin connection (one, serialised) and what only the admin may do."""

    def __init__(self, conninfo: dict[str, Any], timeout_ms: int) -> None:
        self.conninfo = conninfo
        self.password = str(conninfo["password"])
        self.database = str(conninfo["dbname"])
        self.timeout_ms = timeout_ms
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()
        self._naming: bytes | None = None

    # -- names --------------------------------------------------------------------------------

    def role_name(self, key: str) -> str:
        return f"sqlmem_r_{self._name(key)}"

    def schema_name(self, key: str) -> str:
        return f"sqlmem_s_{self._name(key)}"

    def _name(self, key: str) -> str:
        digest = hmac.new(self._naming_key(), check_key(key).encode(), hashlib.sha256)
        return digest.hexdigest()[:32]

    def _naming_key(self) -> bytes:
        # Read once; never under the connection lock (names are derived before taking it).
        if self._naming is None:
            with self.connection() as conn:
                row = conn.execute("SELECT secret FROM sqlmem_admin.naming").fetchone()
            if row is None:
                raise Unavailable("the SQL database (PostgreSQL) has not been prepared yet")
            self._naming = bytes(row[0])
        return self._naming

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self._lock:
            if self._conn is None or self._conn.closed:
                try:
                    self._conn = psycopg.connect(**self.conninfo, autocommit=True)
                except psycopg.OperationalError as e:
                    raise Unavailable("the SQL database (PostgreSQL) is not reachable") from e
            try:
                yield self._conn
            except psycopg.OperationalError as e:
                self._conn.close()
                if e.sqlstate:  # the server answered (a lock, a cancel): the caller's to judge
                    raise
                raise Unavailable("the connection to the SQL database was lost; retry") from e

    def ping(self) -> None:
        """One round trip on the admin connection (made again if it was lost)."""
        try:
            with self.connection() as conn:
                conn.execute("SELECT 1")
        except psycopg.Error as e:
            raise Unavailable("the SQL database (PostgreSQL) is not answering") from e

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- hardening --------------------------------------------------------------------------

    def harden(self) -> None:
        """Apply the database-wide hardening once per version (idempotent, any replica)."""
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_CATALOG])
            conn.execute("CREATE SCHEMA IF NOT EXISTS sqlmem_admin")
            conn.execute("CREATE TABLE IF NOT EXISTS sqlmem_admin.hardening (version int NOT NULL)")
            done = conn.execute("SELECT max(version) FROM sqlmem_admin.hardening").fetchone()
            if done is None or done[0] != HARDENING_VERSION:
                su = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
                if not (row := su.fetchone()) or not row[0]:
                    raise Unavailable("the SQL Memory admin role must be a superuser to harden")
                hardening.revoke_public(conn, self.database)
                self._ensure_role(conn, EMPTY_ROLE, EMPTY_SCHEMA, create=False)
                conn.execute("DELETE FROM sqlmem_admin.hardening")
                conn.execute("INSERT INTO sqlmem_admin.hardening VALUES (%s)", [HARDENING_VERSION])
            self._naming = self._ensure_naming(conn)
            self._migrate(conn)

    @staticmethod
    def _ensure_naming(conn: psycopg.Connection[Any]) -> bytes:
        """The naming key: made by the first replica (under the catalog lock), read by all."""
        conn.execute(
            """CREATE TABLE IF NOT EXISTS sqlmem_admin.naming (
                one boolean PRIMARY KEY DEFAULT true CHECK (one), secret bytea NOT NULL)"""
        )
        conn.execute("REVOKE ALL ON sqlmem_admin.naming FROM PUBLIC")
        conn.execute(
            "INSERT INTO sqlmem_admin.naming (secret) VALUES (%s) ON CONFLICT DO NOTHING",
            [secrets.token_bytes(_NAMING_KEY_BYTES)],
        )
        row = conn.execute("SELECT secret FROM sqlmem_admin.naming").fetchone()
        assert row is not None  # inserted just above when missing
        return bytes(row[0])

    def _migrate(self, conn: psycopg.Connection[Any], key: str | None = None) -> None:
        """Rename scopes still under their unkeyed names (all, or one) to the keyed names.

        The caller holds the catalog lock in a transaction: all of it or none happens, once.
        Sessions of an old role end (they were opened under the old name by an older replica);
        the renamed role gets the password and ``search_path`` of its new name.
        """
        rows = conn.execute(
            "SELECT key FROM sqlmem_admin.databases WHERE name IS NULL "
            "AND (%(key)s::text IS NULL OR key = %(key)s)",
            {"key": key},
        ).fetchall()
        for (old,) in rows:
            name = self._name(old)
            role, schema = f"sqlmem_r_{name}", f"sqlmem_s_{name}"
            old_role, old_schema = f"sqlmem_r_{old}", f"sqlmem_s_{old}"
            if self._exists(conn, "pg_namespace", "nspname", old_schema):
                conn.execute(
                    sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                        sql.Identifier(old_schema), sql.Identifier(schema)
                    )
                )
            if self._exists(conn, "pg_roles", "rolname", old_role):
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                    [old_role],
                )
                conn.execute(
                    sql.SQL("ALTER ROLE {} RENAME TO {}").format(
                        sql.Identifier(old_role), sql.Identifier(role)
                    )
                )
                self._ensure_role(conn, role, schema, create=True)
            conn.execute("UPDATE sqlmem_admin.databases SET name = %s WHERE key = %s", [name, old])

    @staticmethod
    def _exists(conn: psycopg.Connection[Any], catalog: str, column: str, value: str) -> bool:
        # catalog and column are this module's constants, never caller text
        query = f"SELECT 1 FROM pg_catalog.{catalog} WHERE {column} = %s"  # noqa: S608
        return conn.execute(query, [value]).fetchone() is not None

    # -- scopes -----------------------------------------------------------------------------

    def provision(self, ref: ScopeRef) -> None:
        """Create the scope's role, schema and owner record if missing; reset the password."""
        key = check_key(ref.scope_key)
        name, role, schema = self._name(key), self.role_name(key), self.schema_name(key)
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_CATALOG])
            self._migrate(conn, key)
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            self._ensure_role(conn, role, schema, create=True)
            conn.execute(
                "INSERT INTO sqlmem_admin.databases (key, tenant_id, scope, owner_id, name) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING",
                [key, ref.tenant_id, ref.scope.value, ref.owner_id, name],
            )

    def reset_password(self, role: str) -> bool:
        """Set a role's derived password again (a role may change its own); False if absent."""
        with self.connection() as conn:
            found = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
            if found is None:
                return False
            # LOGIN too: a role a restore made in another cluster may not have it yet.
            conn.execute(
                sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(role_password(self.password, role))
                )
            )
            return True

    def restore_roles(self, roles: Sequence[str]) -> int:
        """After a restore (roles are cluster-wide, so not in a dump): give every scope role
        the dump names its LOGIN, this deployment's derived password, its settings and its
        grants, as provisioning would. Returns the roles set up; other names are left."""
        done = 0
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_CATALOG])
            for role in roles:
                schema = "sqlmem_s_" + role.removeprefix("sqlmem_r_")
                if role == EMPTY_ROLE or (
                    role.startswith("sqlmem_r_")
                    and self._exists(conn, "pg_namespace", "nspname", schema)
                ):
                    empty = role == EMPTY_ROLE
                    self._ensure_role(
                        conn, role, EMPTY_SCHEMA if empty else schema, create=not empty
                    )
                    done += 1
        return done

    def _ensure_role(
        self, conn: psycopg.Connection[Any], role: str, schema: str, *, create: bool
    ) -> None:
        r, s = sql.Identifier(role), sql.Identifier(schema)
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
        password = sql.Literal(role_password(self.password, role))
        attrs = sql.SQL(
            "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS "
            "CONNECTION LIMIT 16 PASSWORD {}"
        ).format(password)
        verb = "ALTER" if exists else "CREATE"
        conn.execute(sql.SQL(verb + " ROLE {} ").format(r) + attrs)
        for setting, value in (
            ("search_path", schema),
            ("statement_timeout", str(self.timeout_ms)),
            ("idle_in_transaction_session_timeout", _IDLE_IN_TX),
            ("temp_file_limit", TEMP_FILES),
        ):
            conn.execute(
                sql.SQL("ALTER ROLE {} SET {} = {}").format(
                    r, sql.Identifier(setting), sql.Literal(value)
                )
            )
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(self.database), r)
        )
        privileges = "USAGE, CREATE" if create else "USAGE"
        conn.execute(sql.SQL(f"GRANT {privileges} ON SCHEMA {{}} TO {{}}").format(s, r))

    def databases(self) -> list[DatabaseInfo]:
        with self.connection() as conn:
            rows = conn.execute(
                """SELECT d.key, d.tenant_id, d.scope, d.owner_id, d.modified_at,
                           sqlmem_admin.bytes_of(n.nspname)
                    FROM sqlmem_admin.databases d
                    JOIN pg_namespace n ON n.nspname = 'sqlmem_s_' || d.name
                    ORDER BY d.key"""
            ).fetchall()
        return [
            DatabaseInfo(
                key=key,
                tenant_id=tenant,
                scope=Scope(scope) if scope in Scope.__members__ else None,
                owner_id=owner,
                bytes=int(size),
                modified_at=modified.astimezone(UTC) if modified else datetime.now(UTC),
            )
            for key, tenant, scope, owner, modified, size in rows
        ]

    def erase(self, key: str) -> int | None:
        """Drop a scope's schema and role (its sessions on every replica end); bytes freed."""
        role, schema = self.role_name(key), self.schema_name(key)
        with self.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_CATALOG])
            self._migrate(conn, key)
            found = conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", [schema]
            ).fetchone()
            freed = None
            if found is not None:
                freed = int(
                    conn.execute("SELECT sqlmem_admin.bytes_of(%s)", [schema]).fetchone()[0]  # type: ignore[index]
                )
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                    [role],
                )
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone():
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
            conn.execute("DELETE FROM sqlmem_admin.databases WHERE key = %s", [key])
            return freed

    def compact(self, key: str) -> None:
        """Rewrite the scope's tables and indexes, so the pages of a rolled-back batch do not
        count against the quota (plain VACUUM never shrinks an index)."""
        schema = self.schema_name(key)
        with self.connection() as conn:
            tables = conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r', 'm')",
                [schema],
            ).fetchall()
            for (table,) in tables:
                conn.execute(
                    sql.SQL("VACUUM FULL {}.{}").format(
                        sql.Identifier(schema), sql.Identifier(table)
                    )
                )
