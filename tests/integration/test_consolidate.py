"""The consolidator on the real Neo4j: harvest -> consolidate -> recall, leases, dead letters.

Spans are harvested through the real HTTP API. Consolidation runs as the real command in a
subprocess, or, where a test needs to steer time or failures, through the same functions the
command runs (``consolidate_scope``) with a clock the test moves.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver

from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.acting import act_for_user
from palimpsest.resolvers.cycle import consolidate, queue, turn_rows
from palimpsest.resolvers.cycle.consolidate import consolidate_scope
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import Clock, FailingExtractor, config, harvest, scope_of

SEARCH = """query($q: String!) { search(scope: USER, query: $q, topK: 5, sources: [DOCUMENTS]) {
  hits { id kind text documentId chunkType observedAt
         provenance { origin compactionGeneration session run agent } } } }"""
DOCUMENTS = """{ documents(scope: USER, pathPrefix: "/conversations/") { items { id title path
  chunkCount provenance { origin } } } }"""
DOCUMENT = """query($id: ID!) { document(scope: USER, id: $id) { markdown
  chunks { id type text index observedAt provenance { origin compactionGeneration } } } }"""
SPANS = """
MATCH (p:PendingSpan {tenant_id: $tenant})
RETURN p {.id, .status, .attempts, .takeovers, .last_error, .lease_owner, .document_id} AS span
ORDER BY p.seq
"""
TURNS = """
MATCH (c:Chunk {tenant_id: $tenant, type: 'turn'})
OPTIONAL MATCH (c)-[n:NEXT]->(d:Chunk)
RETURN c.id AS id, c.index AS index, c.text AS text, d.id AS next ORDER BY c.index
"""


def rows(driver: Driver, query: str, tenant: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(query, tenant=tenant)
    return [dict(r) for r in records]


def spans_of(driver: Driver, tenant: str) -> list[dict[str, Any]]:
    return [r["span"] for r in rows(driver, SPANS, tenant)]


def assert_one_chain(driver: Driver, tenant: str, texts: Sequence[str]) -> None:
    """Exactly one turn per span, in span order, linked by NEXT in that order."""
    turns = rows(driver, TURNS, tenant)
    assert [t["text"] for t in turns] == list(texts)
    assert [t["next"] for t in turns] == [t["id"] for t in turns[1:]] + [None]


def test_harvested_spans_are_found_by_search_after_consolidate_once(
    gql: Gql, token: Callable[..., str], tenant_id: str, neo4j_driver: Driver
) -> None:
    who = token(tenant_id, "alice", "planner", session="trip-2024", run="run-7", model="m1")
    texts = [
        "We landed in Lisbon on a rainy Tuesday.",
        "The tram to Alfama was packed with tourists.",
        "Dinner was grilled sardines by the river.",
    ]
    harvest(gql, who, texts, gen=4, observedAt="2024-03-05T18:00:00Z")
    command = Path(sys.executable).parent / "palimpsest"
    done = subprocess.run(
        [str(command), "consolidate", "--once"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"consolidated"' in done.stdout

    hits = ok(gql(SEARCH, who, q="sardines by the river"))["search"]["hits"]
    top = hits[0]
    assert top["text"] == "Alice: Dinner was grilled sardines by the river."
    assert (top["kind"], top["chunkType"]) == ("DOCUMENTS", "TURN")
    assert top["observedAt"].startswith("2024-03-05T18:00:00")
    assert top["provenance"] == {
        "origin": "COMPACTION",
        "compactionGeneration": 4,
        "session": "trip-2024",
        "run": "run-7",
        "agent": "planner",
    }
    [doc] = ok(gql(DOCUMENTS, who))["documents"]["items"]
    assert (doc["title"], doc["path"], doc["chunkCount"]) == (
        "Conversation trip-2024",
        "/conversations/trip-2024",
        3,
    )
    assert doc["provenance"]["origin"] == "COMPACTION"
    full = ok(gql(DOCUMENT, who, id=doc["id"]))["document"]
    assert [c["text"] for c in full["chunks"]] == [f"Alice: {t}" for t in texts]
    assert full["markdown"] == "\n\n".join(f"Alice: {t}" for t in texts) + "\n\n"
    assert all(s["status"] == "done" for s in spans_of(neo4j_driver, tenant_id))
    assert_one_chain(neo4j_driver, tenant_id, [f"Alice: {t}" for t in texts])


async def test_two_workers_never_lease_the_same_span(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services
) -> None:
    who = token(tenant_id, "alice", "planner")
    ids = harvest(gql, who, [f"turn {i}" for i in range(40)])
    _, _, key = scope_of(tenant_id, "alice")
    ref = resolve_scope(act_for_user(tenant_id, "alice"), Scope.USER)
    assert ref.scope_key == key
    leases = await asyncio.gather(*(queue.lease(svc, ref, f"w{i}", 15, 60, 5) for i in range(4)))
    taken = [s.id for lease in leases for s in lease.spans]
    assert len(taken) == len(set(taken)) == 40
    assert set(taken) == set(ids)


async def test_an_expired_lease_is_taken_over_and_nothing_is_written_twice(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, neo4j_driver: Driver
) -> None:
    who = token(tenant_id, "alice", "planner", session="s")
    texts = ["first thing", "second thing", "third thing"]
    harvest(gql, who, texts)
    clock = Clock()
    timed = replace(svc, clock=clock)
    tenant, user, key = scope_of(tenant_id, "alice")
    ref = resolve_scope(act_for_user(tenant, user), Scope.USER)
    crashed = config("crashed-worker")
    lease = await queue.lease(timed, ref, crashed.owner, 50, 30, 5)  # then it "dies"
    assert len(lease.spans) == 3

    taker = config("taker")
    early = await consolidate_scope(timed, taker, tenant, user, key)
    assert early.leased == 0  # the lease is still live: nobody else may take the spans

    clock.offset = timedelta(seconds=31)
    later = await consolidate_scope(timed, taker, tenant, user, key)
    assert (later.leased, later.consolidated, later.takeovers) == (3, 3, 3)

    # The crashed worker wakes up and tries to write its batch: refused, nothing written.
    turns = [turn_rows.turn(s) for s in lease.spans]
    vectors = await svc.embed([t.text for t in turns])
    with pytest.raises(consolidate.LeaseLost):
        await consolidate._write(timed, crashed, ref, lease.spans, turns, vectors)
    assert_one_chain(neo4j_driver, tenant_id, [f"Alice: {t}" for t in texts])
    spans = spans_of(neo4j_driver, tenant_id)
    assert {s["status"] for s in spans} == {"done"}
    assert {s["takeovers"] for s in spans} == {1}


async def test_a_failing_span_waits_and_is_placed_in_order_when_it_succeeds(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, neo4j_driver: Driver
) -> None:
    who = token(tenant_id, "alice", "planner", session="s")
    texts = ["opening line (flaky)", "middle line", "closing line"]
    harvest(gql, who, texts)
    clock = Clock()
    timed = replace(svc, clock=clock)
    tenant, user, key = scope_of(tenant_id, "alice")
    worker = config("w", FailingExtractor("flaky", 2), backoff_seconds=10)
    first = await consolidate_scope(timed, worker, tenant, user, key)
    # The batch failed as a whole, then span by span: only the flaky one failed.
    assert (first.consolidated, first.failed, first.dead) == (2, 1, 0)
    assert (await consolidate_scope(timed, worker, tenant, user, key)).leased == 0  # back-off
    clock.offset = timedelta(seconds=11)
    second = await consolidate_scope(timed, worker, tenant, user, key)
    assert (second.consolidated, second.dead) == (1, 0)
    # Written last, read first: the turn takes its place by span order.
    assert_one_chain(neo4j_driver, tenant_id, [f"Alice: {t}" for t in texts])


async def test_a_span_that_keeps_failing_becomes_a_dead_letter_with_its_error(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, neo4j_driver: Driver
) -> None:
    who = token(tenant_id, "alice", "planner", session="s")
    harvest(gql, who, ["fine one", "poison pill", "fine two"])
    tenant, user, key = scope_of(tenant_id, "alice")
    worker = config("w", FailingExtractor("poison", -1), max_attempts=2)
    outcomes = [await consolidate_scope(svc, worker, tenant, user, key) for _ in range(3)]
    assert [o.dead for o in outcomes] == [0, 1, 0]
    assert outcomes[2].leased == 0
    spans = {s["id"]: s for s in spans_of(neo4j_driver, tenant_id)}
    [dead] = [s for s in spans.values() if s["status"] == "dead"]
    assert dead["attempts"] == 2
    assert dead["last_error"] == "INVALID_ARGUMENT: the test extractor refuses this span"
    assert sorted(s["status"] for s in spans.values()) == ["dead", "done", "done"]
    assert_one_chain(neo4j_driver, tenant_id, ["Alice: fine one", "Alice: fine two"])


async def test_a_span_whose_worker_keeps_dying_becomes_a_dead_letter(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, neo4j_driver: Driver
) -> None:
    who = token(tenant_id, "alice", "planner")
    harvest(gql, who, ["crashes the worker"])
    clock = Clock()
    timed = replace(svc, clock=clock)
    ref = resolve_scope(act_for_user(tenant_id, "alice"), Scope.USER)
    for attempt in range(2):
        lease = await queue.lease(timed, ref, f"doomed-{attempt}", 10, 5, 2)
        assert len(lease.spans) == 1  # leased, then the worker "dies"
        clock.offset += timedelta(seconds=6)
    last = await queue.lease(timed, ref, "survivor", 10, 5, 2)
    assert (last.spans, len(last.dead)) == ([], 1)
    [span] = spans_of(neo4j_driver, tenant_id)
    assert span["status"] == "dead"
    assert span["last_error"] == queue.LOST_ERROR


def test_a_worker_serves_its_counters_and_stops_cleanly_on_sigterm() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    command = Path(sys.executable).parent / "palimpsest"
    worker = subprocess.Popen(
        [str(command), "consolidate", "--metrics-port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
                break
            except httpx.TransportError:
                assert worker.poll() is None, "the worker exited"
                assert time.monotonic() < deadline, "no metrics listener"
                time.sleep(0.5)
        for name in (
            "palimpsest_consolidated_spans_total",
            "palimpsest_consolidation_failures_total",
            "palimpsest_dead_letters_total",
            "palimpsest_lease_takeovers_total",
        ):
            assert name in text
        worker.send_signal(signal.SIGTERM)
        out, _ = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 0
    assert '"consolidated"' in out


async def test_a_visit_leases_ahead_only_after_a_full_batch(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, ran: list[str]
) -> None:
    """A batch short of the lease limit drained the scope: no second lease is tried, while
    full batches are followed by the next one (the pipeline)."""
    who = token(tenant_id, "alice", "planner")
    harvest(gql, who, [f"short visit {i}" for i in range(3)])
    ran.clear()
    outcome = await consolidate_scope(svc, config("w", batch_size=5), *scope_of(tenant_id, "alice"))
    assert outcome.consolidated == 3
    assert ran.count("LOCK_LEASABLE") == 1
    harvest(gql, who, [f"long visit {i}" for i in range(12)])
    ran.clear()
    outcome = await consolidate_scope(svc, config("w", batch_size=5), *scope_of(tenant_id, "alice"))
    assert outcome.consolidated == 12
    assert ran.count("LOCK_LEASABLE") == 3  # 5, 5, then 2: short, so no fourth
