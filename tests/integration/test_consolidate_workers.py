"""Consolidator workers as separate deployments: two processes, each started in its own working
directory with its own settings file (``.env``) and no PALIMPSEST_* environment, share one
queue through Neo4j alone (issue 13: workers on several machines)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.local.neo4j import credentials
from tests.integration.conftest import Gql
from tests.integration.cycle import harvest

DONE_BY = """
MATCH (p:PendingSpan {tenant_id: $tenant})
OPTIONAL MATCH (c:Chunk {id: p.id})
RETURN p.id AS id, p.status AS status, p.consolidated_by AS owner, p.leased_at AS leased,
       count(c) AS turns
"""


def settings_file(folder: Path, settings: Settings, batch: int) -> Path:
    user, password = credentials(settings)
    folder.mkdir()
    lines = {
        "PALIMPSEST_HOME": str(settings.home),
        "PALIMPSEST_NEO4J_MANAGED": "false",
        "PALIMPSEST_NEO4J_URI": f"bolt://127.0.0.1:{settings.neo4j.bolt_port}",
        "PALIMPSEST_NEO4J_USER": user,
        "PALIMPSEST_NEO4J_PASSWORD": password,
        "PALIMPSEST_CONSOLIDATE_BATCH_SIZE": str(batch),
    }
    (folder / ".env").write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    return folder


def test_two_worker_processes_with_their_own_settings_share_one_queue(
    gql: Gql,
    token: Callable[..., str],
    neo4j_driver: Driver,
    settings: Settings,
    tmp_path: Path,
) -> None:
    tenant = f"cw-{uuid.uuid4().hex[:10]}"
    who = token(tenant, "alice", "planner", session="s1")
    texts = [f"Turn {i}: the tide table for pier {i} was posted." for i in range(120)]
    for start in range(0, len(texts), 40):
        harvest(gql, who, texts[start : start + 40])
    batches = {"a": 2, "b": 3}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    command = str(Path(sys.executable).parent / "palimpsest")
    procs = {
        name: subprocess.Popen(
            [command, "consolidate", "--once"],
            cwd=settings_file(tmp_path / name, settings, batch),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, batch in batches.items()
    }
    outputs = {name: p.communicate(timeout=600) for name, p in procs.items()}
    for name, p in procs.items():
        assert p.returncode == 0, outputs[name][1][-2000:]
    summaries = {
        name: json.loads(out.strip().splitlines()[-1]) for name, (out, _) in outputs.items()
    }

    records, _, _ = neo4j_driver.execute_query(DONE_BY, tenant=tenant)
    assert len(records) == 120
    assert {(r["status"], r["turns"]) for r in records} == {("done", 1)}  # once each, no loss
    pids = {str(p.pid): name for name, p in procs.items()}
    by_worker = Counter(pids[r["owner"].split(":")[1]] for r in records)
    # Both took part, and each leased in batches of the size its own settings file gave it.
    assert set(by_worker) == {"a", "b"}
    for name in batches:
        mine = [r for r in records if pids[r["owner"].split(":")[1]] == name]
        leases = Counter(r["leased"] for r in mine)
        assert max(leases.values()) == batches[name], (name, leases)
        assert summaries[name]["consolidated"] >= by_worker[name]
