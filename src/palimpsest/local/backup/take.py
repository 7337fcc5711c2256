"""``palimpsest backup DIR``: the managed Neo4j's dump, SQL Memory, and a manifest with hashes.

Community Edition cannot dump a running database (no online backup, no ``STOP DATABASE``), so
the managed server is stopped for the dump and started again; the SQLite files are copied in
the same window, so no graph write lands between the two planes' copies. PostgreSQL is dumped
online by ``pg_dump`` (one snapshot). The manifest is written last: a folder without one is
an unfinished backup, which a re-run clears and starts again.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import palimpsest
from palimpsest.config import Settings
from palimpsest.errors import Conflict, InvalidArgument
from palimpsest.local import neo4j as neo4j_local
from palimpsest.local.backup import manifest, sqlplane
from palimpsest.local.neo4j import admin

Say = Callable[[str], None]
NEO4J_DIR = "neo4j"
UNFINISHED = ".unfinished"  # present while a backup is being written
ROLES = "postgres/roles.txt"


def require_managed(settings: Settings) -> None:
    settings.neo4j.refuse_sharded("backup and restore")
    if not settings.neo4j.managed or settings.neo4j.uri is not None:
        raise InvalidArgument(
            "backup and restore work on the managed Neo4j (PALIMPSEST_NEO4J_MANAGED, no "
            "PALIMPSEST_NEO4J_URI); for another server use its own neo4j-admin"
        )


def backup(settings: Settings, folder: Path, say: Say = print) -> dict[str, Any]:
    require_managed(settings)
    _prepare(folder)
    (folder / UNFINISHED).touch()
    postgres = settings.sql.backend == "postgres"
    pg_version = sqlplane.postgres_version(settings) if postgres else None
    if postgres:
        # Online and consistent on its own; taken first so the graph's window stays short.
        say("pg_dump of the SQL Memory database")
        sqlplane.dump_postgres(settings, folder / sqlplane.PG_DUMP)
        (folder / ROLES).write_text("".join(f"{r}\n" for r in sqlplane.postgres_roles(settings)))
    was_running = neo4j_local.status(settings).running
    stopped_at = time.monotonic()
    try:
        if was_running:
            say("stopping the managed Neo4j for the dump (Community has no online dump)")
            neo4j_local.stop(settings, say)
        admin.dump(settings, folder / NEO4J_DIR)
        if not postgres:
            sqlplane.copy_sqlite(sqlplane.sqlite_root(settings), folder / sqlplane.SQLITE_DIR)
    finally:
        if was_running:
            neo4j_local.start(settings, say)
    stopped = round(time.monotonic() - stopped_at, 3)
    (folder / UNFINISHED).unlink()
    made = manifest.Manifest(
        format=manifest.FORMAT,
        created_at=datetime.now(UTC).isoformat(),
        palimpsest_version=palimpsest.__version__,
        neo4j_version=settings.neo4j.version,
        neo4j_database=settings.neo4j.database,
        sql_backend=settings.sql.backend,
        postgres_version=pg_version,
        neo4j_stopped_seconds=stopped,
        files=manifest.entries(folder),
    )
    manifest.write(folder, made)
    say(f"backup in {folder}: {len(made.files)} files, {made.total_bytes} bytes")
    return {
        "backup": str(folder),
        "files": len(made.files),
        "bytes": made.total_bytes,
        "sql_backend": made.sql_backend,
        "neo4j_stopped_seconds": stopped,
    }


def _prepare(folder: Path) -> None:
    """An empty or new folder; an unfinished backup of ours is cleared; anything else refused."""
    if folder.exists() and not folder.is_dir():
        raise InvalidArgument(f"{folder} is not a folder")
    if folder.is_dir() and any(folder.iterdir()):
        if not (folder / UNFINISHED).exists():
            raise Conflict(f"{folder} is not empty: back up into a new or empty folder")
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
