"""Retention sweeps on the real Neo4j: a sweep removes exactly what its tenant's windows say
(expired notes into the past, old versions, old tombstones, finished queue spans), beside
concurrent writers, with the scope's counters exact after every batch; a ``knownAt`` read
before what was swept is refused as swept; a sweep killed with SIGKILL finishes on re-run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key, swept_ref
from palimpsest.resolvers.cycle import sweep
from palimpsest.resolvers.services import Services, utc_now
from palimpsest.resolvers.tenant import retention
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import drain, harvest

SET = """mutation($k: String!, $v: JSON!, $ttl: Int) {
  memorySet(scope: USER, key: $k, value: $v, ttlSeconds: $ttl) { updatedAt } }"""
DELETE = """mutation($k: String!) { memoryDelete(scope: USER, key: $k) { deleted } }"""
GET = """query($k: String!, $known: Instant) {
  memory(scope: USER, key: $k, knownAt: $known) { value } }"""
HISTORY = """query($k: String!) { memoryHistory(scope: USER, key: $k, limit: 1000) {
  items { value deleted createdAt expiredAt } } }"""
POLICY = """mutation($v: Int, $t: Int, $d: Int) {
  setRetentionPolicy(versionsSeconds: $v, tombstonesSeconds: $t, doneSpansSeconds: $d) {
    versionsSeconds tombstonesSeconds doneSpansSeconds overridden } }"""
RECALL = """query($q: String!, $when: WhenInput) {
  recall(scope: USER, query: $q, topK: 5, sources: [NOTES], when: $when) { hits { key } } }"""
READ_POLICY = (
    "{ retentionPolicy { versionsSeconds tombstonesSeconds doneSpansSeconds overridden } }"
)
COUNTS = """
MATCH (s:Scope {scope_key: $key})
RETURN s.memory_bytes AS bound, s.note_versions AS counted,
       s.history_swept_before AS horizon,
       COUNT { MATCH (v:MemoryVersion {scope_key: $key}) } AS versions,
       COUNT { MATCH (v:MemoryVersion {scope_key: $key}) WHERE v.deleted } AS tombstones,
       COUNT { MATCH (m:Memory {scope_key: $key}) } AS notes,
       COLLECT { MATCH (m:Memory {scope_key: $key}) RETURN coalesce(sum(m.bytes), 0) AS b }[0]
         AS bytes,
       COUNT { MATCH (p:PendingSpan {scope_key: $key}) } AS spans
"""


def counts(driver: Driver, tenant: str, user: str) -> dict[str, Any]:
    key = scope_key(tenant, Scope.USER, user)
    records, _, _ = driver.execute_query(COUNTS, key=key)
    return dict(records[0])


def settled(driver: Driver, tenant: str, user: str) -> dict[str, Any]:
    """The counts once they stop moving: a COMMIT the killed client had already sent still
    lands on the server after the kill."""
    last = counts(driver, tenant, user)
    for _ in range(40):
        time.sleep(0.25)
        now = counts(driver, tenant, user)
        if now == last:
            return now
        last = now
    raise AssertionError(f"the counts never settled: {last}")


def exact(c: dict[str, Any]) -> None:
    """The scope's counters agree with its rows."""
    assert c["bound"] == c["bytes"], c
    assert c["counted"] == c["versions"], c


def stamp(gql: Gql, who: str, key: str, value: Any, ttl: int | None = None) -> datetime:
    done = ok(gql(SET, who, k=key, v=value, ttl=ttl))["memorySet"]["updatedAt"]
    return datetime.fromisoformat(done)


async def sweep_user(
    svc: Services, tenant: str, user: str, now: datetime, batch: int = 2
) -> sweep.Swept:
    """Sweep one user scope at ``now`` (the resolver the command runs, with its clock)."""
    ref = swept_ref(tenant, "USER", user)
    moved = replace(svc, clock=lambda: now)
    policy = await retention.tenant_policy(moved, swept_ref(tenant, "TENANT", tenant))
    return await sweep.sweep_scope(moved, ref, policy, now, batch)


@pytest.fixture
def people(token: Callable[..., str]) -> tuple[str, str, str]:
    tenant = f"sw-{uuid.uuid4().hex[:8]}"
    return tenant, token(tenant, "alice", "planner"), token(tenant, "boss", admin=True)


def test_the_policy_is_the_servers_until_an_admin_sets_it(
    gql: Gql, people: tuple[str, str, str]
) -> None:
    _, alice, boss = people
    defaults = ok(gql(READ_POLICY, alice))["retentionPolicy"]
    assert defaults == {
        "versionsSeconds": 0,
        "tombstonesSeconds": 0,
        "doneSpansSeconds": 30 * 86400,
        "overridden": [],
    }
    refused = gql(POLICY, alice, v=60)
    assert refused["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    bad = gql(POLICY, boss, v=-1)
    assert bad["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert ok(gql(READ_POLICY, alice))["retentionPolicy"] == defaults  # changed nothing
    set_ = ok(gql(POLICY, boss, v=60, t=0))["setRetentionPolicy"]
    assert set_ == {
        "versionsSeconds": 60,
        "tombstonesSeconds": 0,
        "doneSpansSeconds": 30 * 86400,
        "overridden": ["VERSIONS", "TOMBSTONES"],
    }
    assert ok(gql(READ_POLICY, alice))["retentionPolicy"] == set_


async def test_a_sweep_removes_exactly_what_the_window_says(
    gql: Gql, svc: Services, neo4j_driver: Driver, people: tuple[str, str, str]
) -> None:
    tenant, alice, boss = people
    t1 = stamp(gql, alice, "plan", "v1")
    t2 = stamp(gql, alice, "plan", "v2")
    t3 = stamp(gql, alice, "plan", "v3")  # current; v1 ended at t2, v2 at t3
    stamp(gql, alice, "gone", "x")
    ok(gql(DELETE, alice, k="gone"))
    stamp(gql, alice, "brief", "short-lived", ttl=1)
    await asyncio.sleep(1.2)
    before = counts(neo4j_driver, tenant, "alice")
    assert (before["versions"], before["tombstones"], before["notes"]) == (4, 1, 2)

    # Defaults: versions and tombstones are kept for ever; the expired note moves into the past.
    swept = await sweep_user(svc, tenant, "alice", utc_now() + timedelta(days=3650))
    assert (swept.expired_notes, swept.versions, swept.tombstones) == (1, 0, 0)
    after = counts(neo4j_driver, tenant, "alice")
    assert (after["versions"], after["notes"], after["horizon"]) == (5, 1, None)
    exact(after)
    [brief] = ok(gql(HISTORY, alice, k="brief"))["memoryHistory"]["items"]
    assert brief["value"] == "short-lived"
    assert brief["expiredAt"] is not None
    assert ok(gql(GET, alice, k="brief"))["memory"] is None

    # A window of one hour, swept at t3 + 1h + half the gap between t2 and t3: v1 (ended t2)
    # is past it, v2 (ended t3) is not; the tombstone window stays for ever.
    ok(gql(POLICY, boss, v=3600))
    at = t3 + timedelta(hours=1) - (t3 - t2) / 2
    swept = await sweep_user(svc, tenant, "alice", at)
    assert (swept.versions, swept.tombstones) == (1, 0)
    plan = ok(gql(HISTORY, alice, k="plan"))["memoryHistory"]["items"]
    assert [v["value"] for v in plan] == ["v3", "v2"]
    after = counts(neo4j_driver, tenant, "alice")
    assert after["horizon"].to_native() == t2
    assert after["tombstones"] == 1
    exact(after)

    # knownAt inside the swept past says so; at the horizon and after, it reads exactly.
    refused = gql(GET, alice, k="plan", known=t1.isoformat())
    assert refused["data"] is None or refused["data"]["memory"] is None
    [error] = refused["errors"]
    assert error["extensions"]["code"] == "INVALID_ARGUMENT"
    assert error["extensions"]["historySwept"] is True
    assert error["extensions"]["historySweptBefore"] == t2.isoformat()
    assert ok(gql(GET, alice, k="plan", known=t2.isoformat()))["memory"]["value"] == "v2"
    past = gql(RECALL, alice, q="plan", when={"knownAt": t1.isoformat()})
    assert past["errors"][0]["extensions"]["historySweptBefore"] == t2.isoformat()
    assert "errors" not in gql(RECALL, alice, q="plan", when={"knownAt": t2.isoformat()})

    # Tombstones: a window of one second takes the delete's tombstone.
    ok(gql(POLICY, boss, v=3600, t=1))
    swept = await sweep_user(svc, tenant, "alice", utc_now() + timedelta(seconds=5))
    assert (swept.versions, swept.tombstones) == (0, 1)
    after = counts(neo4j_driver, tenant, "alice")
    assert after["tombstones"] == 0
    exact(after)


async def test_a_sweep_beside_concurrent_writers_keeps_every_write_and_exact_counters(
    gql: Gql, svc: Services, neo4j_driver: Driver, people: tuple[str, str, str]
) -> None:
    tenant, alice, boss = people
    for i in range(40):
        stamp(gql, alice, f"old-{i % 4}", i)  # 36 past versions of four keys
    ok(gql(POLICY, boss, v=1))
    await asyncio.sleep(1.5)

    def write(n: int) -> None:
        for j in range(15):
            stamp(gql, alice, f"new-{n}", j)

    writers = [asyncio.ensure_future(asyncio.to_thread(write, n)) for n in range(3)]
    removed, beside = 0, 0
    while not all(w.done() for w in writers):  # sweeps while they write
        removed += (await sweep_user(svc, tenant, "alice", utc_now(), batch=3)).versions
        beside += 1
    await asyncio.gather(*writers)
    removed += (await sweep_user(svc, tenant, "alice", utc_now(), batch=3)).versions
    assert beside >= 1
    assert removed >= 36  # every old version, and perhaps writes older than one second
    after = counts(neo4j_driver, tenant, "alice")
    exact(after)
    assert after["notes"] == 4 + 3  # every key's current version stays
    assert after["versions"] == 36 + 3 * 14 - removed  # no write lost, none removed twice
    for n in range(3):
        assert ok(gql(GET, alice, k=f"new-{n}"))["memory"]["value"] == 14


async def test_finished_queue_spans_past_their_window_are_swept(
    gql: Gql,
    svc: Services,
    neo4j_driver: Driver,
    people: tuple[str, str, str],
    token: Callable[..., str],
) -> None:
    tenant, _, boss = people
    runner = token(tenant, "alice", "planner", run="run-1", session="s-1")
    harvest(gql, runner, ["one thing", "another thing"])
    harvest(gql, runner, ["still waiting"], gen=2)
    done = await drain(svc, tenant, "alice")
    assert done.consolidated == 3
    harvest(gql, runner, ["queued later"], gen=3)  # stays queued: never swept
    assert counts(neo4j_driver, tenant, "alice")["spans"] == 4
    swept = await sweep_user(svc, tenant, "alice", utc_now() + timedelta(days=29))
    assert swept.done_spans == 0  # the default window is 30 days
    ok(gql(POLICY, boss, d=60))
    swept = await sweep_user(svc, tenant, "alice", utc_now() + timedelta(seconds=61))
    assert swept.done_spans == 3
    assert counts(neo4j_driver, tenant, "alice")["spans"] == 1


def test_another_tenants_policy_and_scopes_are_untouched(
    gql: Gql, neo4j_driver: Driver, token: Callable[..., str], people: tuple[str, str, str]
) -> None:
    tenant, alice, boss = people
    other = f"sw-{uuid.uuid4().hex[:8]}"
    carol = token(other, "carol")
    for i in range(3):
        stamp(gql, carol, "k", i)
        stamp(gql, alice, "k", i)
    ok(gql(POLICY, boss, v=1))
    time.sleep(1.5)
    result = run_sweep(tenant)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["versions"] == 2
    assert summary["walks"] == 1
    assert counts(neo4j_driver, tenant, "alice")["versions"] == 0
    assert counts(neo4j_driver, other, "carol")["versions"] == 2
    assert ok(gql(READ_POLICY, carol))["retentionPolicy"]["versionsSeconds"] == 0


def _command(tenant: str) -> list[str]:
    return [sys.executable, "-c", "from palimpsest.cli import main; main()", "sweep", "--once",
            "--tenant", tenant]  # fmt: skip


def run_sweep(tenant: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(tenant),
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_a_killed_sweep_finishes_on_rerun_with_exact_counters(
    gql: Gql, neo4j_driver: Driver, people: tuple[str, str, str]
) -> None:
    tenant, alice, boss = people
    # 300 writes of one key, 20 to a request (the root-field limit): 299 past versions.
    fields = (
        f'v{i}: memorySet(scope: USER, key: "k", value: {i}) {{ updatedAt }}' for i in range(20)
    )
    mutation = "mutation {" + " ".join(fields) + "}"
    for _ in range(15):
        ok(gql(mutation, alice))
    assert counts(neo4j_driver, tenant, "alice")["versions"] == 299
    ok(gql(POLICY, boss, v=1))
    time.sleep(1.5)

    env = {**os.environ, "PALIMPSEST_SWEEP_BATCH_SIZE": "1"}
    proc = subprocess.Popen(
        _command(tenant), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while counts(neo4j_driver, tenant, "alice")["versions"] > 250:
        assert proc.poll() is None, "the sweep finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    mid = settled(neo4j_driver, tenant, "alice")
    assert 0 < mid["versions"] <= 250
    exact(mid)  # every batch moved its counters with its rows: nothing is half-applied

    result = run_sweep(tenant)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["versions"] == mid["versions"]
    end = counts(neo4j_driver, tenant, "alice")
    assert (end["versions"], end["notes"]) == (0, 1)
    exact(end)
    assert ok(gql(GET, alice, k="k"))["memory"]["value"] == 19
