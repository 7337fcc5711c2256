"""A small fault run on its own Neo4j: SIGKILL mid-batch, then every batch is all or nothing.

The fault server has its own home (a fresh temp dir) and its own free ports; only the process
its pid file names is killed. The shared server is checked to be untouched afterwards.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.local import neo4j as neo4j_local
from palimpsest_suites import faults
from palimpsest_suites.served import free_port


@pytest.mark.timeout(900)
def test_kills_lose_nothing_and_half_write_nothing(
    settings: Settings, neo4j_driver: Driver, tmp_path: Path
) -> None:
    home = tmp_path / "faults-home"
    bolt, http = free_port(), free_port()
    shared_pid = neo4j_local.status(settings).pid

    try:
        r = faults.run(settings, 2, lambda _: None, home=home, bolt_port=bolt, http_port=http)
        stopped = not neo4j_local.status(faults.fault_settings(home, bolt, http)).running
    finally:
        shutil.rmtree(home, ignore_errors=True)  # the fault server's data, logs and SQL files

    assert r["kills"] == 2
    assert r["batches_by_kind"]["facts"] > 0
    assert r["batches_by_kind"]["api-sql"] > 0
    assert r["acknowledged"] > 0
    assert r["lost"] == 0, r["notes"]
    assert r["half_written"] == 0, r["notes"]
    assert r["unrecovered"] == 0
    # Cleaned up: the fault server is stopped; the shared one runs on, same process.
    assert stopped
    assert neo4j_local.status(settings).pid == shared_pid
    neo4j_driver.verify_connectivity()


def test_the_fault_server_may_not_use_the_shared_port(tmp_path: Path, settings: Settings) -> None:
    shared = settings.neo4j.bolt_port
    with pytest.raises(ValueError, match=f"shared Bolt port {shared}"):
        faults.fault_settings(tmp_path, shared, 7485)
