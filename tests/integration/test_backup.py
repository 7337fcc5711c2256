"""Backup and restore of a managed deployment, on a private Neo4j of its own (backup_world).

One private server for the module (starting one takes ~30 s on this machine): a backup, then
the target is changed, and every restore below must bring back exactly the backed-up world,
compared as a whole (every node and relationship with labels and properties, the indexes and
constraints, every SQLite database's dump).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from neo4j import GraphDatabase
from psycopg import sql

from palimpsest.config import Settings
from palimpsest.errors import Conflict, InvalidArgument
from palimpsest.local import neo4j as neo4j_local
from palimpsest.local import postgres as postgres_local
from palimpsest.local.backup import backup, restore
from palimpsest.local.backup.restore import JOURNAL
from palimpsest_suites.served import free_port
from tests.integration import backup_world as bw

# A backup or restore stops and starts the private Neo4j; on a loaded machine one test takes
# longer than the suite's default limit.
pytestmark = pytest.mark.timeout(1200)
CHANGE = "MATCH (n:Note) DETACH DELETE n WITH count(*) AS gone CREATE (:Intruder {at: 1})"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    with bw.private_neo4j(tmp_path_factory.mktemp("backup") / "home") as s:
        yield s


@pytest.fixture(scope="module")
def backed_up(
    deployment: Settings, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    """The seeded world and its backup, then the target changed on both planes."""
    bw.seed(deployment, "t-backup", "u1")
    before = bw.world(deployment)
    labels = " ".join(before["graph"][bw.NODES])
    for label in ("Memory", "Document", "Chunk", "Entity", "Scope"):
        assert f'"{label}"' in labels, label  # every plane is in the world compared
    assert any('"FACT"' in r for r in before["graph"][bw.RELATIONSHIPS])
    assert any("'bsql',9" in line for dump in before["sql"].values() for line in dump)
    folder = tmp_path_factory.mktemp("backups") / "b1"
    summary = backup(deployment, folder, say=lambda _: None)
    assert summary["files"] == len(json.loads((folder / "manifest.json").read_text())["files"])
    assert neo4j_local.status(deployment).running  # started again after the dump
    assert bw.world(deployment) == before  # a backup changes nothing
    _change(deployment)
    return folder, before


def _change(s: Settings) -> None:
    with GraphDatabase.driver(s.bolt_uri, auth=neo4j_local.credentials(s)) as driver:
        driver.execute_query(CHANGE)
    for db in (s.home / "sql").glob("*.db"):
        db.write_bytes(b"")  # emptied: no longer the backed-up file


def test_the_manifest_names_versions_sizes_and_hashes(backed_up: tuple[Path, Any]) -> None:
    folder, _ = backed_up
    body = json.loads((folder / "manifest.json").read_text())
    assert body["neo4j_version"] == "2026.09.0"
    assert body["sql_backend"] == "sqlite"
    assert body["neo4j_stopped_seconds"] > 0
    paths = {f["path"] for f in body["files"]}
    assert "neo4j/neo4j.dump" in paths
    assert any(p.startswith("sql/") and p.endswith(".db") for p in paths)
    assert any(p.startswith("sql/") and p.endswith(".json") for p in paths)
    assert body["total_bytes"] == sum(f["bytes"] for f in body["files"]) > 0
    for f in body["files"]:
        assert len(f["sha256"]) == 64
        assert (folder / f["path"]).stat().st_size == f["bytes"]


def test_a_non_empty_target_is_refused_and_left_alone(
    deployment: Settings, backed_up: tuple[Path, Any]
) -> None:
    folder, before = backed_up
    changed, pid = bw.world(deployment), neo4j_local.status(deployment).pid
    assert changed != before
    with pytest.raises(Conflict, match="not empty"):
        restore(deployment, folder, say=lambda _: None)
    assert neo4j_local.status(deployment).pid == pid  # never stopped
    assert bw.world(deployment) == changed
    assert not (deployment.home / JOURNAL).exists()


@pytest.mark.parametrize("damage", ["flip", "unlisted", "missing", "no-manifest"])
def test_a_damaged_backup_is_refused_before_anything_is_touched(
    deployment: Settings, backed_up: tuple[Path, Any], tmp_path: Path, damage: str
) -> None:
    folder, _ = backed_up
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    dump = copy / "neo4j" / "neo4j.dump"
    if damage == "flip":
        data = bytearray(dump.read_bytes())
        data[len(data) // 2] ^= 0xFF
        dump.write_bytes(bytes(data))
    elif damage == "unlisted":
        (copy / "sql" / "extra.db").write_bytes(b"x")
    elif damage == "missing":
        dump.unlink()
    else:
        (copy / "manifest.json").unlink()
    changed, pid = bw.world(deployment), neo4j_local.status(deployment).pid
    with pytest.raises(InvalidArgument, match=r"verification|manifest"):
        restore(deployment, copy, force=True, say=lambda _: None)
    assert neo4j_local.status(deployment).pid == pid
    assert bw.world(deployment) == changed
    assert not (deployment.home / JOURNAL).exists()


def test_a_forced_restore_reproduces_every_plane(
    deployment: Settings, backed_up: tuple[Path, Any]
) -> None:
    folder, before = backed_up
    summary = restore(deployment, folder, force=True, say=lambda _: None)
    assert summary["files"] > 0
    assert bw.world(deployment) == before
    assert not (deployment.home / JOURNAL).exists()
    _change(deployment)


def test_a_killed_restore_finishes_when_run_again(
    deployment: Settings, backed_up: tuple[Path, Any]
) -> None:
    folder, before = backed_up
    assert bw.world(deployment) != before
    journal = deployment.home / JOURNAL
    env = bw.env(deployment)
    process = subprocess.Popen(
        bw.command("restore", str(folder), "--force"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own group: the kill takes neo4j-admin with it
    )
    # Kill it in the middle of the graph step: journal written, server stopped, load running.
    deadline = time.monotonic() + 120
    while not (journal.exists() and not neo4j_local.status(deployment).running):
        assert process.poll() is None, "the restore ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(2.0)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert json.loads(journal.read_text())["done"] == []  # stopped half-way
    assert not neo4j_local.status(deployment).running
    # The re-run (without --force: the journal names this backup) finishes the job.
    done = subprocess.run(
        bw.command("restore", str(folder)), env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "resuming the restore" in done.stderr
    assert json.loads(done.stdout)["restored"] == str(folder)
    assert not journal.exists()
    assert bw.world(deployment) == before


def test_backup_refuses_a_folder_that_holds_something(deployment: Settings, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    pid = neo4j_local.status(deployment).pid
    with pytest.raises(Conflict, match="not empty"):
        backup(deployment, tmp_path, say=lambda _: None)
    assert (tmp_path / "keep.txt").read_text() == "mine"
    assert neo4j_local.status(deployment).pid == pid


def test_an_unmanaged_neo4j_is_refused(tmp_path: Path) -> None:
    s = Settings(home=tmp_path, neo4j_uri="bolt://127.0.0.1:1")
    with pytest.raises(InvalidArgument, match="managed Neo4j"):
        backup(s, tmp_path / "b", say=lambda _: None)
    assert not (tmp_path / "b").exists()


@pytest.fixture(scope="module")
def on_postgres(deployment: Settings) -> Iterator[Settings]:
    """The same private Neo4j with SQL Memory on a private PostgreSQL cluster (own port)."""
    s = deployment.replace(sql_backend="postgres", postgres_port=free_port())
    postgres_local.start(s, lambda _: None)
    try:
        yield s
    finally:
        postgres_local.stop(s, lambda _: None)


def test_a_postgres_round_trip_reproduces_every_plane(
    on_postgres: Settings, tmp_path: Path
) -> None:
    s = on_postgres
    bw.seed(s, "t-pg", "u2")
    before = {"graph": bw.graph(s), "sql": bw.pg_tables(s)}
    assert any("bsql" in row for rows in before["sql"].values() for row in rows)
    backup(s, tmp_path / "pg", say=lambda _: None)
    assert (tmp_path / "pg" / "postgres" / "sql.dump").stat().st_size > 0
    with GraphDatabase.driver(s.bolt_uri, auth=neo4j_local.credentials(s)) as driver:
        driver.execute_query(CHANGE)
    with psycopg.connect(**postgres_local.conninfo(s), autocommit=True) as conn:  # type: ignore[arg-type]
        for schema in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'sqlmem\\_s\\_%'"
        ).fetchall():
            conn.execute(sql.SQL("DELETE FROM {}.faults").format(sql.Identifier(schema[0])))
    assert {"graph": bw.graph(s), "sql": bw.pg_tables(s)} != before
    restore(s, tmp_path / "pg", force=True, say=lambda _: None)
    assert {"graph": bw.graph(s), "sql": bw.pg_tables(s)} == before
    # The scope's own role still reaches its restored schema through the API.
    body = bw.sql_rows(s, "t-pg", "u2")
    assert body.get("errors") is None, body
    assert body["data"]["sqlQuery"]["rows"] == [[10]]


INSERT = """mutation { sqlExec(scope: USER, statements: [
  {statement: "INSERT INTO faults VALUES ('after', 1)"}]) { results { rowsAffected } } }"""


def test_a_restore_into_a_new_cluster_leaves_sql_memory_usable(
    on_postgres: Settings, tmp_path: Path
) -> None:
    """Scope roles are cluster-wide, so no dump holds them. The cluster is made new here by
    dropping the database and every scope role; after the restore the agent's SQL runs
    through the API at once, a read first (a role left NOLOGIN fails there), then a write."""
    s = on_postgres
    bw.seed(s, "t-pg-new", "u3")
    backup(s, tmp_path / "pg", say=lambda _: None)
    before = bw.pg_tables(s)
    with psycopg.connect(**postgres_local.conninfo(s, "postgres"), autocommit=True) as conn:  # type: ignore[arg-type]
        conn.execute(
            sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(s.sql.postgres_database))
        )
        roles = conn.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE 'sqlmem\\_%'")
        for (role,) in roles.fetchall():
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
        assert not conn.execute("SELECT 1 FROM pg_roles WHERE rolname LIKE 'sqlmem\\_%'").fetchall()
    restore(s, tmp_path / "pg", force=True, say=lambda _: None)
    assert bw.pg_tables(s) == before
    with psycopg.connect(**postgres_local.conninfo(s, "postgres"), autocommit=True) as conn:  # type: ignore[arg-type]
        logins = conn.execute(
            "SELECT bool_and(rolcanlogin) FROM pg_roles WHERE rolname LIKE 'sqlmem\\_%'"
        ).fetchone()
    assert logins == (True,)
    body = bw.sql_rows(s, "t-pg-new", "u3")
    assert body.get("errors") is None, body
    assert body["data"]["sqlQuery"]["rows"] == [[10]]
    wrote = bw.sql_post(s, "t-pg-new", "u3", INSERT)
    assert wrote.get("errors") is None, wrote
    assert bw.sql_rows(s, "t-pg-new", "u3")["data"]["sqlQuery"]["rows"] == [[11]]
