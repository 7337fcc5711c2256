"""Pairs judged on demand (docs/extraction.md, Judging conflicts): ``judgeConflicts`` and
``palimpsest judge`` ask the model now about a scope's pending pairs, the ones no consolidator
visit reaches (the TENANT scope's, a user's written by ``assertFacts``). On the real server
and Neo4j, against a local host speaking the model protocol (tests/model_host.py, standing in
for the remote model only). Without a model the call is refused and nothing changes; another
tenant's pairs and another scope's are never asked about."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from palimpsest.client import AsyncClient, Client
from palimpsest.client import Scope as ClientScope
from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.extraction import ModelJudge
from palimpsest.extraction.client import Endpoint, ModelClient
from palimpsest.extraction.wire import Protocol
from palimpsest.identity import Scope
from palimpsest.identity.tokens import load_keys, verify
from palimpsest.resolvers import cycle
from palimpsest.resolvers.services import Services
from palimpsest.server import serve_in_thread
from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql, gql_over
from tests.model_host import (
    ModelHost,
    Seen,
    chat_completion,
    model_host,
    openai_error,
    verdicts_answer,
)

ASSERT = """mutation($scope: Scope!, $facts: [FactInput!]!) {
  assertFacts(scope: $scope, facts: $facts, place: false) { fact { id } } }"""
JUDGE = """mutation($scope: Scope!, $limit: Int) {
  judgeConflicts(scope: $scope, limit: $limit) {
    asked judged dropped failed refused pending } }"""
CONFLICTS = """query($scope: Scope!) {
  factConflicts(scope: $scope, limit: 10) {
    items { id verdict reason judgedBy older { object { name } invalidAt }
            newer { object { name } invalidAt } } } }"""
REASON = "One cannot be based in two cities at once."


def based_in(name: str, city: str) -> dict[str, Any]:
    return {
        "subject": {"type": "organization", "name": name},
        "predicate": "based in",
        "object": {"type": "city", "name": city},
    }


def conflict_for_each(seen: Seen) -> Any:
    shown = json.loads(seen.body["messages"][-1]["content"])
    return chat_completion(
        verdicts_answer(*((p["id"], "conflict", REASON) for p in shown["pairs"]))
    )


def asked_ids(host: ModelHost) -> list[str]:
    return [
        p["id"] for s in host.seen for p in json.loads(s.body["messages"][-1]["content"])["pairs"]
    ]


@pytest.fixture(scope="module")
def host() -> Iterator[ModelHost]:
    with model_host() as h:
        yield h


@pytest.fixture(autouse=True)
def fresh_host(host: ModelHost) -> None:
    host.seen.clear()
    host.replies.clear()
    host.answer = conflict_for_each


@pytest.fixture(scope="module")
def judging_settings(settings: Settings, host: ModelHost) -> Settings:
    """The suite's settings with a model configured (so fact writes record pairs and the
    server has a judge), and a band wide enough for the test embedder's cosine of two "based
    in" facts."""
    update = {"model_url": host.url + "/v1", "model_name": "local-model", "judge_cosine": 0.05}
    judging = settings.replace(**update)
    assert judging.model.judges
    return judging


@pytest.fixture(scope="module")
def judging_url(judging_settings: Settings) -> Iterator[str]:
    with serve_in_thread(judging_settings) as url:
        yield url


@pytest.fixture(scope="module")
def judged_gql(judging_url: str) -> Iterator[Gql]:
    with httpx.Client(base_url=judging_url, timeout=60) as client:
        yield gql_over(client)


def a_pair(gql: Gql, who: str, scope: str, name: str) -> None:
    """Two close facts written in ``scope``: one pending pair."""
    for city in ("Paris", "Berlin"):
        ok(gql(ASSERT, who, scope=scope, facts=[based_in(name, city)]))


def conflicts(gql: Gql, who: str, scope: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ok(gql(CONFLICTS, who, scope=scope))["factConflicts"]["items"]
    return found


def test_a_tenant_pair_is_judged_on_demand_and_no_other_scope_or_tenant_is_asked(
    judged_gql: Gql, token: Callable[..., str], host: ModelHost
) -> None:
    ours, theirs = f"t-{uuid.uuid4().hex[:10]}", f"t-{uuid.uuid4().hex[:10]}"
    alice, mallory = token(ours, "alice"), token(theirs, "mallory")
    a_pair(judged_gql, alice, "TENANT", "Acme")
    a_pair(judged_gql, alice, "USER", "Alice Ltd")
    a_pair(judged_gql, mallory, "TENANT", "Acme")
    [pending] = conflicts(judged_gql, alice, "TENANT")
    assert pending["verdict"] is None
    assert host.seen == []  # writing asks nothing: pairs are only recorded

    done = ok(judged_gql(JUDGE, alice, scope="TENANT", limit=None))["judgeConflicts"]
    assert done == {"asked": 1, "judged": 1, "dropped": 0, "failed": 0, "refused": 0, "pending": 0}
    assert asked_ids(host) == [pending["id"]]  # one call, this scope's pair only

    [found] = conflicts(judged_gql, alice, "TENANT")
    assert (found["verdict"], found["reason"]) == ("CONFLICT", REASON)
    assert found["judgedBy"] == "model:judge_v1:local-model"
    # Report-only: both facts still hold.
    assert found["older"]["invalidAt"] is None
    assert found["newer"]["invalidAt"] is None
    assert {found["older"]["object"]["name"], found["newer"]["object"]["name"]} == {
        "Paris",
        "Berlin",
    }
    # The user's pair and the other tenant's stay pending, never shown to the model.
    [user_pair] = conflicts(judged_gql, alice, "USER")
    [their_pair] = conflicts(judged_gql, mallory, "TENANT")
    assert user_pair["verdict"] is None
    assert their_pair["verdict"] is None
    # Nothing left: a second call asks nothing.
    again = ok(judged_gql(JUDGE, alice, scope="TENANT", limit=5))["judgeConflicts"]
    assert again == {"asked": 0, "judged": 0, "dropped": 0, "failed": 0, "refused": 0, "pending": 0}
    assert len(host.seen) == 1


def test_without_a_model_the_call_is_refused_and_nothing_changes(
    judged_gql: Gql, gql: Gql, live_server_url: str, token: Callable[..., str], host: ModelHost
) -> None:
    alice = token(f"t-{uuid.uuid4().hex[:10]}", "alice")
    a_pair(judged_gql, alice, "TENANT", "Acme")
    before = conflicts(judged_gql, alice, "TENANT")
    refused = gql(JUDGE, alice, scope="TENANT", limit=None)  # the suite's server: no model
    assert refused["data"] is None
    assert code_of(refused) == "UNAVAILABLE"
    assert "PALIMPSEST_MODEL_URL" in refused["errors"][0]["message"]
    with Client(url=live_server_url, token=alice) as client, pytest.raises(Unavailable):
        client.judge_conflicts(ClientScope.TENANT)  # the blocking client: the same refusal
    assert conflicts(judged_gql, alice, "TENANT") == before
    assert before[0]["verdict"] is None
    assert host.seen == []


def test_the_scope_is_checked_as_for_a_write(
    judged_gql: Gql, token: Callable[..., str], host: ModelHost
) -> None:
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    a_pair(judged_gql, token(tenant, "alice"), "TENANT", "Acme")
    isolated = token(tenant, "ivy", isolated=True)
    assert code_of(judged_gql(JUDGE, isolated, scope="TENANT", limit=None)) == "FORBIDDEN"
    admin = token(tenant, "ada", admin=True)
    assert code_of(judged_gql(JUDGE, admin, scope="GLOBAL", limit=None)) == "FORBIDDEN"
    no_user = token(tenant, None, "agent")
    assert code_of(judged_gql(JUDGE, no_user, scope="USER", limit=None)) == "FORBIDDEN"
    member = token(tenant, "bob")
    bad = judged_gql(JUDGE, member, scope="TENANT", limit=0)
    assert code_of(bad) == "INVALID_ARGUMENT"
    assert host.seen == []
    assert conflicts(judged_gql, member, "TENANT")[0]["verdict"] is None


async def test_the_client_judges_a_users_asserted_pairs(
    judged_gql: Gql, judging_url: str, token: Callable[..., str], host: ModelHost
) -> None:
    alice = token(f"t-{uuid.uuid4().hex[:10]}", "alice")
    a_pair(judged_gql, alice, "USER", "Alice Ltd")  # a user who never harvests
    async with AsyncClient(url=judging_url, token=alice) as client:
        done = await client.judge_conflicts(ClientScope.USER, limit=10)
    assert (done.asked, done.judged, done.pending) == (1, 1, 0)
    assert [c["verdict"] for c in conflicts(judged_gql, alice, "USER")] == ["CONFLICT"]


def test_palimpsest_judge_acts_as_the_run_token(
    judged_gql: Gql, token: Callable[..., str], host: ModelHost, judging_settings: Settings
) -> None:
    alice = token(f"t-{uuid.uuid4().hex[:10]}", "alice")
    a_pair(judged_gql, alice, "TENANT", "Acme")
    env = {
        **os.environ,
        "PALIMPSEST_RUN_TOKEN": alice,
        "PALIMPSEST_MODEL_URL": host.url + "/v1",
        "PALIMPSEST_MODEL_NAME": "local-model",
    }
    ran = subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), "judge", "--scope", "tenant"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {
        "asked": 1,
        "judged": 1,
        "dropped": 0,
        "failed": 0,
        "refused": 0,
        "pending": 0,
    }
    assert [c["verdict"] for c in conflicts(judged_gql, alice, "TENANT")] == ["CONFLICT"]


def test_no_lock_is_held_while_the_model_thinks(
    judged_gql: Gql, token: Callable[..., str], host: ModelHost
) -> None:
    """A write to the scope being judged goes through while the model has not answered."""
    alice = token(f"t-{uuid.uuid4().hex[:10]}", "alice")
    a_pair(judged_gql, alice, "TENANT", "Acme")
    asked, release = threading.Event(), threading.Event()

    def slow(seen: Seen) -> Any:
        asked.set()
        release.wait(timeout=60)
        return conflict_for_each(seen)

    host.answer = slow
    done: list[dict[str, Any]] = []
    judging = threading.Thread(
        target=lambda: done.append(judged_gql(JUDGE, alice, scope="TENANT", limit=None))
    )
    judging.start()
    try:
        assert asked.wait(timeout=60)
        ok(judged_gql(ASSERT, alice, scope="TENANT", facts=[based_in("Acme", "Rome")]))
        assert done == []  # the write finished while the model was still thinking
    finally:
        release.set()
        judging.join(timeout=60)
    assert ok(done[0])["judgeConflicts"]["judged"] == 1


def on_demand(svc: Services, host: ModelHost, tokens_per_day: int = 0) -> Services:
    endpoint = Endpoint(Protocol.OPENAI, host.url + "/v1", "local-model", SecretStr("sk"), 5.0, 2)
    client = ModelClient(endpoint, backoff_seconds=0.01)
    return replace(svc, judge=ModelJudge(client, tokens_per_day=tokens_per_day))


async def test_a_failing_model_leaves_the_pairs_pending_and_counted(
    judged_gql: Gql, token: Callable[..., str], host: ModelHost, svc: Services, settings: Settings
) -> None:
    raw = token(f"t-{uuid.uuid4().hex[:10]}", "alice")
    a_pair(judged_gql, raw, "TENANT", "Acme")
    host.answer = lambda _: openai_error(503, "server_error", "overloaded")
    who = verify(load_keys(settings), raw)
    failed = await cycle.judge_now(on_demand(svc, host), who, Scope.TENANT)
    assert (failed.asked, failed.judged, failed.failed, failed.pending) == (1, 0, 1, 1)
    assert len(host.seen) == 2  # the client's retries
    [pair] = conflicts(judged_gql, raw, "TENANT")
    assert pair["verdict"] is None


async def test_the_tenants_token_cap_refuses_once_spent(
    judged_gql: Gql, token: Callable[..., str], host: ModelHost, svc: Services, settings: Settings
) -> None:
    raw = token(f"t-{uuid.uuid4().hex[:10]}", "alice")
    a_pair(judged_gql, raw, "TENANT", "Acme")
    who = verify(load_keys(settings), raw)
    capped = on_demand(svc, host, tokens_per_day=100)
    first = await cycle.judge_now(capped, who, Scope.TENANT)
    assert first.judged == 1  # the cap was not reached before the call: it spends 876
    ok(judged_gql(ASSERT, raw, scope="TENANT", facts=[based_in("Acme", "Rome")]))
    second = await cycle.judge_now(capped, who, Scope.TENANT)
    assert (second.asked, second.judged, second.refused) == (second.pending, 0, second.pending)
    assert second.pending >= 1
    assert len(host.seen) == 1
