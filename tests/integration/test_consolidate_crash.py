"""Crash safety on every run: real worker processes killed with SIGKILL while they hold leases.

A small run of the crash suite (``palimpsest_suites.crash``; ``palimpsest bench
consolidate-crash`` runs it large): one worker process drains a queue while the harness kills
it mid-lease and starts a new one. Afterwards every span must be done with exactly one turn
chunk, and every conversation one NEXT chain, read straight from Neo4j.
"""

from __future__ import annotations

from neo4j import Driver

from palimpsest.config import Settings
from palimpsest_suites import crash

PER_SPAN = """
MATCH (p:PendingSpan {tenant_id: $tenant})
OPTIONAL MATCH (c:Chunk {id: p.id})
RETURN p.id AS id, p.status AS status, p.takeovers AS takeovers, count(c) AS chunks
"""
TURNS = """
MATCH (c:Chunk {tenant_id: $tenant}) WHERE c.index IS NOT NULL
RETURN count(c) AS turns, COUNT { MATCH (:Chunk {tenant_id: $tenant})-[:NEXT]->() } AS links,
       count(DISTINCT c.document_id) AS documents
"""


async def test_killed_workers_lose_and_duplicate_nothing(
    settings: Settings, neo4j_driver: Driver
) -> None:
    result = await crash.run_crash(
        settings,
        spans=48,
        kills=2,
        workers=1,
        lease_seconds=2.0,
        batch=4,
        users=1,
        sessions=2,
        deadline_seconds=240,
        keep=True,
        say=lambda _: None,
    )
    assert result["kills"] == 2
    assert (result["lost"], result["duplicated"], result["chain_errors"]) == (0, 0, 0)
    assert result["consolidated"] == result["accepted"] == 48

    tenant = result["tenant"]
    spans, _, _ = neo4j_driver.execute_query(PER_SPAN, tenant=tenant)
    assert len(spans) == 48
    assert {(r["status"], r["chunks"]) for r in spans} == {("done", 1)}
    assert sum(r["takeovers"] for r in spans) >= 1  # a killed worker's lease was taken over
    [turns], _, _ = neo4j_driver.execute_query(TURNS, tenant=tenant)
    assert turns["turns"] == 48
    assert turns["links"] == 48 - turns["documents"]  # one chain per conversation
