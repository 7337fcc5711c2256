"""Conflicts judged (docs/extraction.md, Judging conflicts), on the real Neo4j, against a
local host speaking the model protocols (tests/model_host.py, standing in for the remote
model only): a written fact close to a stored one records a pair in the write, the
consolidator asks the model about it after writing, and ``factConflicts`` lists the verdict
in the scope only; neither fact is closed or deleted. A failing model leaves the pair pending;
erasure removes pairs with their facts, and an export carries them back."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from neo4j import Driver
from pydantic import SecretStr

from palimpsest.client import AsyncClient
from palimpsest.client import Scope as ClientScope
from palimpsest.client.enums import PairVerdict
from palimpsest.config import Settings
from palimpsest.extraction import ModelJudge
from palimpsest.extraction.client import Endpoint, ModelClient
from palimpsest.extraction.judge import TOOL
from palimpsest.extraction.wire import Protocol
from palimpsest.identity import Scope
from palimpsest.jobs.portability import import_from_file
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import config, drain, harvest
from tests.model_host import (
    ModelHost,
    Seen,
    chat_completion,
    message_tool_use,
    model_host,
    openai_error,
    verdicts_answer,
)

ASSERT = """mutation($facts: [FactInput!]!) {
  assertFacts(scope: USER, facts: $facts, place: false) { fact { id } } }"""
CONFLICTS = """query($scope: Scope!, $verdicts: [PairVerdict!], $pending: Boolean!) {
  factConflicts(scope: $scope, verdicts: $verdicts, pending: $pending, limit: 10) {
    items { id cosine createdAt verdict reason judgedBy judgedAt
      older { id text object { name } invalidAt expiredAt }
      newer { id text object { name } invalidAt expiredAt } }
    cursor hasMore } }"""
FACTS = """{ facts(scope: USER, subject: {type: "person", name: "Alice"}) {
  items { id object { name } invalidAt } } }"""
EXPORT = "{ exportMe { lines } }"
ERASE_ME = "mutation { eraseMe { status } }"
ERASE_SUBJECT = """mutation { eraseSubject(scope: USER, subject: {type: "person", name: "Alice"})
  { status } }"""
PAIRS = "MATCH (p:FactPair) WHERE p.tenant_id = $t RETURN properties(p) AS p ORDER BY p.id"
REASON = "Alice cannot live in Paris and Berlin at once."


def lives_in(city: str) -> dict[str, Any]:
    return {
        "subject": {"type": "person", "name": "Alice"},
        "predicate": "lives in",
        "object": {"type": "city", "name": city},
    }


@pytest.fixture
def host() -> Iterator[ModelHost]:
    with model_host() as h:
        yield h


def judging(svc: Services, host: ModelHost) -> Services:
    """The services with judging on: the model configured, and a band wide enough that the
    test embedder's cosine of two "lives in" facts falls in it."""
    settings = svc.settings.replace(
        model_url=host.url + "/v1", model_name="local-model", judge_cosine=0.05
    )
    assert settings.model.judges
    return replace(svc, settings=settings)


def judge(host: ModelHost, protocol: Protocol = Protocol.OPENAI) -> ModelJudge:
    url = host.url + ("/v1" if protocol is Protocol.OPENAI else "")
    endpoint = Endpoint(protocol, url, "local-model", SecretStr("sk-local"), 5.0, 2)
    return ModelJudge(ModelClient(endpoint, backoff_seconds=0.01))


def conflict_for_each(protocol: Protocol) -> Callable[[Seen], Any]:
    def answer(seen: Seen) -> Any:
        if protocol is Protocol.OPENAI:
            shown = json.loads(seen.body["messages"][-1]["content"])
        else:
            shown = json.loads(seen.body["messages"][0]["content"])
        verdicts = verdicts_answer(*((p["id"], "conflict", REASON) for p in shown["pairs"]))
        if protocol is Protocol.OPENAI:
            return chat_completion(verdicts)
        return message_tool_use(verdicts, tool=TOOL.name)

    return answer


def conflicts(gql: Gql, who: str, scope: str = "USER", **filters: Any) -> list[dict[str, Any]]:
    args = {"verdicts": None, "pending": False, **filters}
    page = ok(gql(CONFLICTS, who, scope=scope, **args))["factConflicts"]
    found: list[dict[str, Any]] = page["items"]
    return found


async def paris_then_berlin(
    gql: Gql, alice: str, svc: Services, host: ModelHost, tenant_id: str, model: ModelJudge
) -> Any:
    """Paris asserted, then Berlin harvested as a provided fact and consolidated."""
    ok(gql(ASSERT, alice, facts=[lives_in("Paris")]))
    harvest(gql, alice, ["I live in Berlin these days."], facts=[lives_in("Berlin")])
    cfg = config("judge-worker", judge=model)
    return await drain(judging(svc, host), tenant_id, "alice", cfg)


@pytest.mark.parametrize("protocol", [Protocol.OPENAI, Protocol.ANTHROPIC])
async def test_a_close_pair_is_judged_after_writing_and_listed_in_its_scope_only(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    protocol: Protocol,
) -> None:
    host.answer = conflict_for_each(protocol)
    granted = [Scope.USER, Scope.AGENT]
    alice = token(tenant_id, "alice", "planner", memory_scopes=granted, sql_scopes=granted)
    outcome = await paris_then_berlin(gql, alice, svc, host, tenant_id, judge(host, protocol))
    assert outcome.consolidated == 1
    assert outcome.counted("judged") == 1
    assert outcome.counted("tokens_in") > 0
    assert len(host.seen) == 1  # one call for the visit's pairs

    shown = host.seen[0].body
    asked = json.loads(shown["messages"][-1]["content"])
    [pair] = asked["pairs"]
    assert (pair["older"]["object"], pair["newer"]["object"]) == ("Paris", "Berlin")

    [found] = conflicts(gql, alice)
    assert found["verdict"] == "CONFLICT"
    assert found["reason"] == REASON
    assert found["judgedBy"] == "model:judge_v1:local-model"
    assert found["judgedAt"] is not None
    assert 0.05 <= found["cosine"] < 1.0
    assert found["older"]["object"]["name"] == "Paris"
    assert found["newer"]["object"]["name"] == "Berlin"
    assert found["id"] == pair["id"]
    # Report-only: both facts still hold, neither closed nor retired.
    for side in (found["older"], found["newer"]):
        assert side["invalidAt"] is None
        assert side["expiredAt"] is None
    current = ok(gql(FACTS, alice))["facts"]["items"]
    assert {f["object"]["name"] for f in current} == {"Paris", "Berlin"}

    # The filters, and no other scope or person sees the pair.
    assert conflicts(gql, alice, verdicts=["CONFLICT"]) == [found]
    assert conflicts(gql, alice, verdicts=["SAME", "COMPATIBLE"]) == []
    assert conflicts(gql, alice, pending=True) == []
    bob = token(tenant_id, "bob", "planner")
    assert conflicts(gql, bob) == []
    assert conflicts(gql, alice, scope="AGENT") == []

    # A second visit asks nothing more: the pair is judged.
    harvest(gql, alice, ["Nothing new."])
    cfg = config("judge-worker", judge=judge(host, protocol))
    again = await drain(judging(svc, host), tenant_id, "alice", cfg)
    assert again.counted("judged") == 0
    assert len(host.seen) == 1


async def test_two_new_facts_of_one_batch_are_paired_and_judged(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, host: ModelHost
) -> None:
    # Nothing stored about Alice: the two facts meet only inside the batch's write.
    host.answer = conflict_for_each(Protocol.OPENAI)
    alice = token(tenant_id, "alice", "planner")
    harvest(gql, alice, ["Paris, or was it Berlin?"], facts=[lives_in("Paris"), lives_in("Berlin")])
    cfg = config("judge-worker", judge=judge(host))
    outcome = await drain(judging(svc, host), tenant_id, "alice", cfg)
    assert outcome.consolidated == 1
    assert outcome.counted("judged") == 1
    [found] = conflicts(gql, alice)
    assert found["verdict"] == "CONFLICT"
    # The batch's earlier fact is the older of the pair.
    assert (found["older"]["object"]["name"], found["newer"]["object"]["name"]) == (
        "Paris",
        "Berlin",
    )


async def test_a_failing_model_leaves_the_pair_pending_until_a_later_visit(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, host: ModelHost
) -> None:
    host.answer = lambda _: openai_error(503, "server_error", "overloaded")
    alice = token(tenant_id, "alice", "planner")
    outcome = await paris_then_berlin(gql, alice, svc, host, tenant_id, judge(host))
    assert outcome.consolidated == 1  # the span is written whatever the judge does
    assert outcome.counted("judge_failed") == 1
    [pending] = conflicts(gql, alice, pending=True)
    assert pending["verdict"] is None
    assert pending["judgedBy"] is None

    host.answer = conflict_for_each(Protocol.OPENAI)
    harvest(gql, alice, ["Still in Berlin."])
    cfg = config("judge-worker", judge=judge(host))
    later = await drain(judging(svc, host), tenant_id, "alice", cfg)
    assert later.counted("judged") == 1
    assert [c["verdict"] for c in conflicts(gql, alice)] == ["CONFLICT"]
    assert conflicts(gql, alice, pending=True) == []


async def test_without_judging_no_pair_is_recorded(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    neo4j_driver: Driver,
) -> None:
    alice = token(tenant_id, "alice", "planner")
    ok(gql(ASSERT, alice, facts=[lives_in("Paris")]))
    harvest(gql, alice, ["I live in Berlin these days."], facts=[lives_in("Berlin")])
    assert not svc.settings.model.judges
    assert (await drain(svc, tenant_id, "alice")).consolidated == 1
    records, _, _ = neo4j_driver.execute_query(PAIRS, t=tenant_id)
    assert records == []
    assert host.seen == []


async def test_erasing_the_subject_erases_its_pairs(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    neo4j_driver: Driver,
) -> None:
    host.answer = conflict_for_each(Protocol.OPENAI)
    alice = token(tenant_id, "alice", "planner")
    await paris_then_berlin(gql, alice, svc, host, tenant_id, judge(host))
    records, _, _ = neo4j_driver.execute_query(PAIRS, t=tenant_id)
    assert len(records) == 1
    ok(gql(ERASE_SUBJECT, alice))
    records, _, _ = neo4j_driver.execute_query(PAIRS, t=tenant_id)
    assert records == []
    assert conflicts(gql, alice) == []


async def test_an_export_carries_the_pairs_and_erasure_removes_them(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    neo4j_driver: Driver,
    settings: Settings,
    tmp_path: Path,
) -> None:
    host.answer = conflict_for_each(Protocol.OPENAI)
    alice = token(tenant_id, "alice", "planner")
    await paris_then_berlin(gql, alice, svc, host, tenant_id, judge(host))
    before = conflicts(gql, alice)
    stored, _, _ = neo4j_driver.execute_query(PAIRS, t=tenant_id)

    lines = ok(gql(EXPORT, alice))["exportMe"]["lines"]
    kinds = [orjson.loads(x)["kind"] for x in lines]
    assert orjson.loads(lines[0])["minor"] >= 5  # fact pairs came in minor 5
    assert kinds.count("fact_pair") == 1
    assert kinds.index("fact") < kinds.index("fact_pair")  # the facts come first

    assert ok(gql(ERASE_ME, alice))["eraseMe"]["status"] == "DONE"
    records, _, _ = neo4j_driver.execute_query(PAIRS, t=tenant_id)
    assert records == []

    path = tmp_path / f"{uuid.uuid4().hex[:6]}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    loaded = await asyncio.to_thread(lambda: asyncio.run(import_from_file(settings, path)))
    assert loaded["records"]["fact_pair"] == 1
    assert conflicts(gql, alice) == before
    again, _, _ = neo4j_driver.execute_query(PAIRS, t=tenant_id)
    assert [r["p"] for r in again] == [r["p"] for r in stored]


async def test_the_client_reads_the_pairs_typed(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    live_server_url: str,
) -> None:
    host.answer = conflict_for_each(Protocol.OPENAI)
    alice = token(tenant_id, "alice", "planner")
    await paris_then_berlin(gql, alice, svc, host, tenant_id, judge(host))
    async with AsyncClient(url=live_server_url, token=alice) as client:
        page = await client.fact_conflicts(ClientScope.USER, verdicts=[PairVerdict.CONFLICT])
        pending = await client.fact_conflicts(ClientScope.USER, pending=True)
    [pair] = page.items
    assert pair.verdict is PairVerdict.CONFLICT
    assert pair.reason == REASON
    assert pair.judged_at is not None
    assert (pair.older.object.name, pair.newer.object.name) == ("Paris", "Berlin")
    assert page.has_more is False
    assert pending.items == []


PAGE = """query($after: String) { factConflicts(scope: USER, limit: 1, after: $after) {
  items { id newer { object { name } } } cursor hasMore } }"""
# A pair naming a fact its scope lacks, as an import before pairs were checked could leave.
DANGLING = """MATCH (p:FactPair) WHERE p.tenant_id = $t WITH p ORDER BY p.created_at DESC LIMIT 1
CREATE (q:FactPair) SET q = p {.*, id: 'dangling', newer_id: 'no-such-fact',
  created_at: p.created_at + duration('PT1H')}"""


async def test_a_pair_naming_a_missing_fact_never_shortens_a_page(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    neo4j_driver: Driver,
) -> None:
    host.answer = conflict_for_each(Protocol.OPENAI)
    alice = token(tenant_id, "alice", "planner")
    await paris_then_berlin(gql, alice, svc, host, tenant_id, judge(host))
    harvest(gql, alice, ["Rome now."], facts=[lives_in("Rome")])
    cfg = config("judge-worker", judge=judge(host))
    await drain(judging(svc, host), tenant_id, "alice", cfg)
    assert len(conflicts(gql, alice)) == 3  # Paris-Berlin, then Rome with each
    neo4j_driver.execute_query(DANGLING, t=tenant_id)

    seen: list[str] = []
    after = None
    while True:
        page = ok(gql(PAGE, alice, after=after))["factConflicts"]
        assert len(page["items"]) == 1  # full pages: the dangling pair takes no place
        seen += [p["id"] for p in page["items"]]
        if not page["hasMore"]:
            break
        after = page["cursor"]
    assert len(seen) == 3
    assert "dangling" not in seen


async def test_an_import_drops_and_counts_pairs_naming_facts_it_lacks(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    neo4j_driver: Driver,
    settings: Settings,
    tmp_path: Path,
) -> None:
    host.answer = conflict_for_each(Protocol.OPENAI)
    alice = token(tenant_id, "alice", "planner")
    await paris_then_berlin(gql, alice, svc, host, tenant_id, judge(host))
    before = conflicts(gql, alice)
    lines = ok(gql(EXPORT, alice))["exportMe"]["lines"]
    records = [orjson.loads(x) for x in lines]
    [pair] = [r for r in records if r["kind"] == "fact_pair"]
    bad = {**pair, "props": {**pair["props"], "id": "dangling", "newer_id": "no-such-fact"}}
    records.insert(records.index(pair) + 1, bad)
    records[-1]["records"] += 1  # the end record counts it: the file checks
    assert ok(gql(ERASE_ME, alice))["eraseMe"]["status"] == "DONE"

    path = tmp_path / f"{uuid.uuid4().hex[:6]}.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    loaded = await asyncio.to_thread(lambda: asyncio.run(import_from_file(settings, path)))
    assert loaded["records"]["fact_pair"] == 1
    assert loaded["records"]["fact_pair_dropped"] == 1
    stored, _, _ = neo4j_driver.execute_query(PAIRS, t=tenant_id)
    assert [r["p"]["id"] for r in stored] == [pair["props"]["id"]]
    assert conflicts(gql, alice) == before
