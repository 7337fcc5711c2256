"""SQL Memory in a backup: the SQLite files (copied with SQLite's online backup, so each file
is consistent while writers run), or one ``pg_dump`` of the PostgreSQL database.

The PostgreSQL tools come from the managed server's binaries; the password reaches them in
``PGPASSWORD``, never on a command line.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local import postgres as postgres_local
from palimpsest.local.postgres.manager import bin_dir
from palimpsest.sqlmem.postgres.admin import Admin

SQLITE_DIR = "sql"  # in the backup: the SQLite files, as under <home>/sql
PG_DUMP = "postgres/sql.dump"  # in the backup: pg_dump's custom format
_TAIL = 2000


def sqlite_root(settings: Settings) -> Path:
    return settings.home / "sql"


def copy_sqlite(source: Path, target: Path) -> None:
    """Every scope database (``*.db``, by SQLite's backup API) and owner record (``*.json``)."""
    target.mkdir(parents=True, exist_ok=True)
    if not source.is_dir():
        return
    for path in sorted(source.iterdir()):
        if path.suffix == ".db":
            src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            dst = sqlite3.connect(target / path.name)
            try:
                src.backup(dst)
            finally:
                dst.close()
                src.close()
        elif path.suffix == ".json":
            shutil.copyfile(path, target / path.name)


def sqlite_count(settings: Settings) -> int:
    root = sqlite_root(settings)
    return len(list(root.glob("*.db"))) if root.is_dir() else 0


def _pg_env(settings: Settings) -> dict[str, str]:
    user, password = postgres_local.credentials(settings)
    return {**os.environ, "PGPASSWORD": password, "PGUSER": user, "PGCONNECT_TIMEOUT": "10"}


def _pg_tool(settings: Settings, tool: str, *args: str) -> None:
    argv = [
        str(bin_dir(settings) / tool),
        f"--host={settings.sql.postgres_host}",
        f"--port={settings.sql.postgres_port}",
        *args,
    ]
    done = subprocess.run(argv, env=_pg_env(settings), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise Unavailable(f"{tool} failed ({done.returncode}): {(done.stderr or '')[-_TAIL:]}")


def dump_postgres(settings: Settings, target: Path) -> None:
    """One consistent snapshot of the SQL Memory database (pg_dump runs in one transaction)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _pg_tool(
        settings, "pg_dump", "--format=custom", f"--file={target}", settings.sql.postgres_database
    )


def postgres_version(settings: Settings) -> str:
    with _admin(settings, settings.sql.postgres_database) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "unknown"


def postgres_roles(settings: Settings) -> list[str]:
    """The scope roles the dump's grants and owners name (cluster-wide, so not in the dump)."""
    with _admin(settings, settings.sql.postgres_database) as conn:
        rows = conn.execute(
            "SELECT rolname FROM pg_roles WHERE rolname LIKE 'sqlmem\\_%' ORDER BY rolname"
        ).fetchall()
    return [str(r[0]) for r in rows]


def postgres_count(settings: Settings) -> int:
    """Scope schemas in the SQL Memory database (0 when it does not exist yet)."""
    with _admin(settings, "postgres") as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [settings.sql.postgres_database]
        ).fetchone()
    if found is None:
        return 0
    with _admin(settings, settings.sql.postgres_database) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'sqlmem\\_s\\_%'"
        ).fetchone()
    return int(row[0]) if row else 0


def restore_postgres(settings: Settings, dump: Path, roles: list[str]) -> None:
    """Load ``dump`` into a fresh database beside the live one, then swap the two by renaming.

    pg_restore runs in one transaction into ``<db>_restoring`` (dropped first if a killed run
    left it), so an interrupted restore leaves the live database as it was; the renames are
    quick catalog updates. Scope roles are cluster-wide, so not in the dump: missing ones are
    made NOLOGIN for the load (its grants and owners name them), then every one gets its
    LOGIN, this deployment's derived password, its settings and grants (``Admin.restore_roles``),
    so agent SQL works at once, in this cluster or a new one.
    """
    live = settings.sql.postgres_database
    staging, old = f"{live}_restoring", f"{live}_replaced"
    with _admin(settings, "postgres") as conn:
        for name in (staging, old):
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(_ident(name)))
        for role in roles:
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone():
                continue
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(_ident(role)))
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(_ident(staging))
        )
    _pg_tool(
        settings,
        "pg_restore",
        "--single-transaction",
        "--exit-on-error",
        f"--dbname={staging}",
        str(dump),
    )
    with _admin(settings, staging) as conn:
        # Database-level grants are not in a dump: give the scope roles CONNECT again, and have
        # the store re-apply the database-wide hardening when it next prepares the database.
        for role in roles:
            conn.execute(
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(_ident(staging), _ident(role))
            )
        marker = conn.execute("SELECT to_regclass('sqlmem_admin.hardening')").fetchone()
        if marker and marker[0] is not None:
            conn.execute("DELETE FROM sqlmem_admin.hardening")
    with _admin(settings, "postgres") as conn:
        conn.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(_ident(staging)))
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [live]).fetchone()
        if exists:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [live],
            )
            conn.execute(
                sql.SQL("ALTER DATABASE {} RENAME TO {}").format(_ident(live), _ident(old))
            )
        conn.execute(
            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(_ident(staging), _ident(live))
        )
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(_ident(old)))
    admin = Admin(postgres_local.conninfo(settings), settings.sql.timeout_ms)
    try:
        admin.restore_roles(roles)
    finally:
        admin.close()


def _ident(name: str) -> sql.Identifier:
    return sql.Identifier(name)


def _admin(settings: Settings, dbname: str) -> psycopg.Connection[Any]:
    return psycopg.connect(**postgres_local.conninfo(settings, dbname), autocommit=True)  # type: ignore[arg-type]
