"""The database-wide grants SQL Memory runs under on PostgreSQL (``Admin.harden`` applies
them once per ``HARDENING_VERSION``, under the catalog lock):

- PUBLIC loses CONNECT and TEMP on the database, everything on schema ``public``, SELECT on
  every table and view of ``pg_catalog`` (other scopes' names, view bodies, settings, sessions),
  and EXECUTE on every function of ``pg_catalog``; EXECUTE comes back only for the allow-list
  (``functions.py``), the functions behind operators and casts, and what
  ``information_schema`` (privilege-filtered, the way to list one's own tables) calls, and
  the types' input and output functions (casts to and from text use them).
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from palimpsest.sqlmem.postgres.definer import ADMIN_FUNCTIONS, CALLABLE
from palimpsest.sqlmem.postgres.functions import ALLOWED_PG_FUNCTIONS, INFORMATION_SCHEMA_HELPERS

EMPTY_SCHEMA = "sqlmem_empty"


def revoke_public(conn: psycopg.Connection[Any], database: str) -> None:
    """PUBLIC keeps only the allow-list; the admin schema, its registry and functions."""
    db = sql.Identifier(database)
    conn.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(db))
    conn.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")
    conn.execute("REVOKE SELECT ON ALL TABLES IN SCHEMA pg_catalog FROM PUBLIC")
    conn.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA pg_catalog FROM PUBLIC")
    # No functions of their own either (a role may create objects in its own schema).
    conn.execute("REVOKE USAGE ON LANGUAGE sql, plpgsql FROM PUBLIC")
    granted = conn.execute(
        """
        SELECT DISTINCT p.oid::regprocedure::text FROM pg_proc p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace AND (
            p.proname = ANY(%s)
            OR p.oid IN (SELECT oprcode::oid FROM pg_operator)
            OR p.oid IN (SELECT castfunc FROM pg_cast WHERE castfunc <> 0)
            OR p.oid IN (SELECT oprrest::oid FROM pg_operator WHERE oprrest <> 0)
            OR p.oid IN (SELECT oprjoin::oid FROM pg_operator WHERE oprjoin <> 0)
            OR p.oid IN (SELECT typinput::oid FROM pg_type UNION SELECT typoutput::oid
                         FROM pg_type UNION SELECT typreceive::oid FROM pg_type
                         UNION SELECT typsend::oid FROM pg_type))
        """,
        [sorted(ALLOWED_PG_FUNCTIONS | INFORMATION_SCHEMA_HELPERS)],
    ).fetchall()
    for (signature,) in granted:
        # regprocedure text is the catalog's own quoting of a signature, not caller text
        conn.execute(f"GRANT EXECUTE ON FUNCTION {signature} TO PUBLIC")
    conn.execute("REVOKE ALL ON SCHEMA sqlmem_admin FROM PUBLIC")
    conn.execute("GRANT USAGE ON SCHEMA sqlmem_admin TO PUBLIC")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS sqlmem_admin.databases (
            key text PRIMARY KEY, tenant_id text NOT NULL, scope text NOT NULL,
            owner_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
            modified_at timestamptz NOT NULL DEFAULT now())"""
    )
    # The keyed name of the scope's schema and role; NULL for a scope not yet migrated.
    conn.execute("ALTER TABLE sqlmem_admin.databases ADD COLUMN IF NOT EXISTS name text UNIQUE")
    conn.execute("REVOKE ALL ON ALL TABLES IN SCHEMA sqlmem_admin FROM PUBLIC")
    conn.execute(ADMIN_FUNCTIONS)
    conn.execute("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA sqlmem_admin FROM PUBLIC")
    for fn in CALLABLE:
        conn.execute(f"GRANT EXECUTE ON FUNCTION sqlmem_admin.{fn} TO PUBLIC")
    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {EMPTY_SCHEMA}")
    conn.execute(f"REVOKE ALL ON SCHEMA {EMPTY_SCHEMA} FROM PUBLIC")
