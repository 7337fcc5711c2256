"""``palimpsest restore DIR``: verify a backup, then replace the managed deployment's data.

Every file's size and sha256 is checked against the manifest before anything is touched. A
target that holds data (any node in the graph, any SQL Memory database) is refused unless
``force``. The restore then keeps a journal (``<home>/restore-journal.json``, naming the
backup by its manifest's sha256 and the steps done); killed at any point, a re-run of the
same backup finds the journal and finishes (each step is safe to repeat: ``neo4j-admin
database load --overwrite-destination``, SQLite files staged beside the live folder and
swapped in by renames, PostgreSQL loaded into a database beside the live one and renamed).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neo4j import GraphDatabase

from palimpsest.config import Settings
from palimpsest.errors import Conflict, InvalidArgument
from palimpsest.local import neo4j as neo4j_local
from palimpsest.local.backup import manifest, sqlplane
from palimpsest.local.backup.take import NEO4J_DIR, ROLES, require_managed
from palimpsest.local.neo4j import admin

Say = Callable[[str], None]
JOURNAL = "restore-journal.json"
STEPS = ("neo4j", "sql", "start")
COUNT_NODES = "MATCH (n) RETURN count(n) AS n"


def restore(
    settings: Settings, folder: Path, *, force: bool = False, say: Say = print
) -> dict[str, Any]:
    require_managed(settings)
    made = manifest.read(folder)
    manifest.verify(folder, made)
    say(f"verified {len(made.files)} files ({made.total_bytes} bytes) against the manifest")
    _check_compatible(settings, made)
    digest = manifest.digest(folder)
    journal = _read_journal(settings)
    if journal is not None and journal["manifest_sha256"] == digest:
        say(f"resuming the restore of {folder} (done: {', '.join(journal['done']) or 'nothing'})")
    elif journal is not None and not force:
        raise Conflict(
            f"an interrupted restore of another backup ({journal['backup']}) is unfinished: "
            "re-run that one, or pass --force to restore this one over it"
        )
    else:
        if not force:
            _require_empty(settings)
        journal = {"manifest_sha256": digest, "backup": str(folder), "done": []}
        _write_journal(settings, journal)
    for step in STEPS:
        if step in journal["done"]:
            continue
        _run_step(settings, folder, made, step, say)
        journal["done"].append(step)
        _write_journal(settings, journal)
    (settings.home / JOURNAL).unlink()
    say(f"restored {folder}")
    return {"restored": str(folder), "files": len(made.files), "bytes": made.total_bytes}


def _run_step(
    settings: Settings, folder: Path, made: manifest.Manifest, step: str, say: Say
) -> None:
    if step == "neo4j":
        if not neo4j_local.status(settings).installed:
            neo4j_local.install(settings, say)  # a fresh home restored with --force
        neo4j_local.stop(settings, say)
        say("loading the Neo4j dump")
        admin.load(settings, folder / NEO4J_DIR)
    elif step == "sql" and made.sql_backend == "postgres":
        say("restoring the SQL Memory database")
        roles = (folder / ROLES).read_text().split()
        sqlplane.restore_postgres(settings, folder / sqlplane.PG_DUMP, roles)
    elif step == "sql":
        say("restoring the SQL Memory files")
        _swap_sqlite(folder / sqlplane.SQLITE_DIR, sqlplane.sqlite_root(settings))
    elif step == "start":
        neo4j_local.start(settings, say)


def _swap_sqlite(source: Path, live: Path) -> None:
    staging = live.with_name(f"{live.name}.restoring")
    replaced = live.with_name(f"{live.name}.replaced")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(mode=0o700, parents=True)
    for path in sorted(source.iterdir()) if source.is_dir() else []:
        shutil.copyfile(path, staging / path.name)
    shutil.rmtree(replaced, ignore_errors=True)
    if live.exists():
        os.replace(live, replaced)
    os.replace(staging, live)
    shutil.rmtree(replaced, ignore_errors=True)


def _check_compatible(settings: Settings, made: manifest.Manifest) -> None:
    if made.sql_backend != settings.sql.backend:
        raise InvalidArgument(
            f"the backup's SQL Memory is on {made.sql_backend}, this deployment's on "
            f"{settings.sql.backend} (PALIMPSEST_SQL_BACKEND)"
        )
    if (
        made.neo4j_version != settings.neo4j.version
        or made.neo4j_database != settings.neo4j.database
    ):
        raise InvalidArgument(
            f"the backup is of Neo4j {made.neo4j_version} database {made.neo4j_database!r}; this "
            f"deployment runs {settings.neo4j.version} database {settings.neo4j.database!r}"
        )


def _require_empty(settings: Settings) -> None:
    neo4j_local.start(settings, lambda _: None)  # installs a fresh home; no-op when running
    with GraphDatabase.driver(settings.bolt_uri, auth=neo4j_local.credentials(settings)) as d:
        records, _, _ = d.execute_query(COUNT_NODES, database_=settings.neo4j.database)
    nodes = int(records[0]["n"])
    if settings.sql.backend == "postgres":
        sql_count = sqlplane.postgres_count(settings)
    else:
        sql_count = sqlplane.sqlite_count(settings)
    if nodes or sql_count:
        raise Conflict(
            f"the target is not empty ({nodes} nodes, {sql_count} SQL Memory databases): "
            "pass --force to replace them"
        )


def _read_journal(settings: Settings) -> dict[str, Any] | None:
    path = settings.home / JOURNAL
    if not path.is_file():
        return None
    body: dict[str, Any] = json.loads(path.read_text())
    return body


def _write_journal(settings: Settings, journal: dict[str, Any]) -> None:
    settings.home.mkdir(parents=True, exist_ok=True)
    path = settings.home / JOURNAL
    tmp = path.with_name(f"{JOURNAL}.tmp")
    with tmp.open("w") as f:
        f.write(json.dumps(journal) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
