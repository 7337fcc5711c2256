"""Queue visibility: a user's own pending work and dead letters, a tenant's counts for its
admins, requeueing, and the Prometheus gauges."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import httpx
from prometheus_client import REGISTRY

from palimpsest.config import Settings
from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.acting import act_for_user
from palimpsest.jobs.queue_metrics import SPANS, QueueGauges
from palimpsest.resolvers.cycle import queue
from palimpsest.resolvers.services import Services
from palimpsest.server import serve_in_thread
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import Clock, FailingExtractor, config, drain, harvest

PENDING = """query($scope: Scope) { pendingWork(scope: $scope) { scope queued leased done dead
  oldestQueuedSeconds } }"""
DEAD = """query($after: String) { deadLetters(limit: 1, after: $after) {
  items { spanId sourceId session attempts error deadAt } cursor hasMore } }"""
REQUEUE = "mutation($ids: [ID!]!) { requeueDeadLetters(spanIds: $ids) }"


def code(body: dict[str, Any]) -> str:
    assert body.get("data") is None, body
    return str(body["errors"][0]["extensions"]["code"])


def counts(work: dict[str, Any]) -> tuple[int, int, int, int]:
    return work["queued"], work["leased"], work["done"], work["dead"]


def test_the_api_keeps_the_queue_gauges_fresh_on_the_metrics_listener(
    settings: Settings,
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    custom = settings.replace(metrics_port=port, queue_metrics_seconds=0.2)
    SPANS.labels("queued").set(-1)  # only a refresh by the server can make it a count again
    with serve_in_thread(custom):
        deadline = time.monotonic() + 30
        while True:
            text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
            if 'palimpsest_queue_spans{state="queued"} -1.0' not in text:
                break
            assert time.monotonic() < deadline, "the gauges were never refreshed"
            time.sleep(0.1)
    for name in (
        'palimpsest_queue_spans{state="queued"}',
        'palimpsest_queue_spans{state="leased"}',
        'palimpsest_queue_spans{state="dead"}',
        "palimpsest_queue_oldest_pending_seconds",
        "palimpsest_queue_expired_leases",
    ):
        assert name in text


async def test_a_user_sees_their_own_queue_and_dead_letters(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services
) -> None:
    alice = token(tenant_id, "alice", "planner", session="chat")
    bob = token(tenant_id, "bob", "planner")
    ids = harvest(gql, alice, ["fine", "poison here", "also fine"])
    harvest(gql, bob, ["bob's own"])
    before = ok(gql(PENDING, alice))["pendingWork"]
    assert before["scope"] == "USER"
    assert counts(before) == (3, 0, 0, 0)
    assert before["oldestQueuedSeconds"] >= 0
    assert ok(gql(DEAD, alice))["deadLetters"]["items"] == []

    ref = resolve_scope(act_for_user(tenant_id, "alice"), Scope.USER)
    await queue.lease(svc, ref, "someone", 1, 60, 5)
    assert counts(ok(gql(PENDING, alice))["pendingWork"]) == (2, 1, 0, 0)

    clock = Clock()
    clock.offset = timedelta(seconds=61)
    worker = config("w", FailingExtractor("poison", -1), max_attempts=2)
    await drain(replace(svc, clock=clock), tenant_id, "alice", worker)
    after = ok(gql(PENDING, alice))["pendingWork"]
    assert counts(after) == (0, 0, 2, 1)
    assert after["oldestQueuedSeconds"] is None
    page = ok(gql(DEAD, alice))["deadLetters"]
    assert (page["hasMore"], page["cursor"]) == (False, None)
    [letter] = page["items"]
    assert (letter["spanId"], letter["sourceId"], letter["session"]) == (
        ids[1],
        "poison here",
        "chat",
    )
    assert letter["attempts"] == 2
    assert letter["error"] == "INVALID_ARGUMENT: the test extractor refuses this span"
    assert counts(ok(gql(PENDING, bob))["pendingWork"]) == (1, 0, 0, 0)

    # Requeueing: only the caller's own dead letters; then the span waits again.
    assert ok(gql(REQUEUE, bob, ids=[ids[1]]))["requeueDeadLetters"] == []
    assert ok(gql(REQUEUE, alice, ids=[ids[1], ids[0]]))["requeueDeadLetters"] == [ids[1]]
    assert counts(ok(gql(PENDING, alice))["pendingWork"]) == (1, 0, 2, 0)
    assert code(gql(REQUEUE, alice, ids=[])) == "INVALID_ARGUMENT"


def test_tenant_counts_are_for_admins_of_that_tenant_only(
    gql: Gql, token: Callable[..., str], tenant_id: str
) -> None:
    harvest(gql, token(tenant_id, "alice", "planner"), ["a", "b"])
    harvest(gql, token(tenant_id, "bob", "planner"), ["c"])
    admin = token(tenant_id, "root", None, admin=True)
    work = ok(gql(PENDING, admin, scope="TENANT"))["pendingWork"]
    assert (work["scope"], counts(work)) == ("TENANT", (3, 0, 0, 0))
    other = token(f"{tenant_id}-x", "root", None, admin=True)
    assert counts(ok(gql(PENDING, other, scope="TENANT"))["pendingWork"]) == (0, 0, 0, 0)
    member = token(tenant_id, "alice", "planner")
    assert code(gql(PENDING, member, scope="TENANT")) == "FORBIDDEN"
    assert code(gql(PENDING, member, scope="AGENT")) == "INVALID_ARGUMENT"
    assert code(gql(PENDING, token(tenant_id, None, "planner"))) == "FORBIDDEN"


async def test_queue_gauges_count_queued_leased_and_expired_spans(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services
) -> None:
    def sample(name: str, **labels: str) -> float:
        value = REGISTRY.get_sample_value(name, labels)
        assert value is not None, name
        return value

    ids = harvest(gql, token(tenant_id, "alice", "planner"), [f"t{i}" for i in range(6)])
    clock = Clock()
    timed = replace(svc, clock=clock)
    ref = resolve_scope(act_for_user(tenant_id, "alice"), Scope.USER)
    lease = await queue.lease(timed, ref, "gauge-test", 2, 30, 5)
    assert len(lease.spans) == 2
    await QueueGauges(0.001).refresh(timed)
    # Global gauges: other tenants' spans count too, so these are lower bounds.
    assert sample("palimpsest_queue_spans", state="queued") >= len(ids) - 2
    assert sample("palimpsest_queue_spans", state="leased") >= 2
    assert sample("palimpsest_queue_oldest_pending_seconds") >= 0
    clock.offset = timedelta(seconds=31)
    await QueueGauges(0.001).refresh(timed)
    assert sample("palimpsest_queue_expired_leases") >= 2
    assert sample("palimpsest_queue_oldest_pending_seconds") >= 31


async def test_dead_letters_are_paged_newest_first(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services
) -> None:
    alice = token(tenant_id, "alice", "planner")
    harvest(gql, alice, ["poison one", "poison two"])
    worker = config("w", FailingExtractor("poison", -1), max_attempts=1)
    assert (await drain(svc, tenant_id, "alice", worker)).dead == 2
    first = ok(gql(DEAD, alice))["deadLetters"]
    assert first["hasMore"] is True
    second = ok(gql(DEAD, alice, after=first["cursor"]))["deadLetters"]
    assert (second["hasMore"], second["cursor"]) == (False, None)
    letters = first["items"] + second["items"]
    assert sorted(x["sourceId"] for x in letters) == ["poison one", "poison two"]
    assert letters[0]["deadAt"] >= letters[1]["deadAt"]
    assert code(gql(DEAD, alice, after="not-a-cursor")) == "INVALID_ARGUMENT"
