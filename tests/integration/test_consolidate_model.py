"""The ``model`` extractor in the memory cycle, on the real Neo4j, against a local host that
speaks the model protocols (tests/model_host.py, standing in for the remote model only):
a harvested sentence becomes facts found by ``facts`` and ``search``, placed, closed and
stamped like any other; a failing model or a fact the write refuses never loses a span."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from neo4j import Driver
from pydantic import SecretStr

from palimpsest.extraction import ModelExtractor
from palimpsest.extraction.client import Endpoint, ModelClient
from palimpsest.extraction.wire import Protocol
from palimpsest.ontology.extractors import MentionsExtractor, ProvidedExtractor
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import config, drain, harvest
from tests.model_host import (
    ModelHost,
    Seen,
    anthropic_error,
    candidate,
    chat_completion,
    facts_answer,
    message_tool_use,
    model_host,
)

SENTENCE = "I moved to Berlin last month and I work at Siemens now."
ONTOLOGY = """# Tenant ontology
status: confirmed

## person
scope: user
single: lives in, works at

## city

## organization
aliases: company
"""
SET_ONTOLOGY = "mutation($m: String!) { setOntology(markdown: $m) { status } }"
ASSERT = """mutation($facts: [FactInput!]!) {
  assertFacts(scope: USER, facts: $facts, place: false) { fact { id } } }"""
FACTS = """query($name: String!) {
  facts(scope: USER, subject: {type: "person", name: $name}, includeRetired: true) {
    items { predicate text validAt invalidAt object { type name }
      provenance { origin judgedBy judgedAt sourceQuote { chunkId text } } } } }"""
SEARCH = """query($q: String!) { search(scope: USER, query: $q, topK: 10, sources: [FACTS]) {
  hits { kind text } } }"""
BERLIN = candidate(
    "t1",
    "I moved to Berlin last month",
    ("person", "I"),
    "lives in",
    ("city", "Berlin"),
    None,
    "2026-11",
)
SIEMENS = candidate(
    "t1", "I work at Siemens now", ("person", "I"), "works at", ("company", "Siemens")
)


@pytest.fixture
def tenant_id() -> str:
    return f"mx-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def host() -> Iterator[ModelHost]:
    with model_host() as h:
        yield h


def model(host: ModelHost, protocol: Protocol = Protocol.OPENAI) -> ModelExtractor:
    url = host.url + ("/v1" if protocol is Protocol.OPENAI else "")
    endpoint = Endpoint(protocol, url, "local-model", SecretStr("sk-local"), 5.0, 2)
    return ModelExtractor(ModelClient(endpoint, backoff_seconds=0.01))


def workers(host: ModelHost, protocol: Protocol = Protocol.OPENAI) -> Any:
    return config("model-worker", MentionsExtractor(), ProvidedExtractor(), model(host, protocol))


def facts_of(gql: Gql, who: str, name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ok(gql(FACTS, who, name=name))["facts"]["items"]
    return found


@pytest.mark.parametrize("protocol", [Protocol.OPENAI, Protocol.ANTHROPIC])
async def test_a_harvested_sentence_becomes_facts_found_by_facts_and_search(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    protocol: Protocol,
) -> None:
    answer = facts_answer(BERLIN, SIEMENS)
    host.answer = lambda _: (
        chat_completion(answer) if protocol is Protocol.OPENAI else message_tool_use(answer)
    )
    ok(gql(SET_ONTOLOGY, token(tenant_id, "root", None, admin=True), m=ONTOLOGY))
    alice = token(tenant_id, "alice", "planner", session="chat-1", run="run-1")
    paris = {
        "subject": {"type": "person", "name": "Alice"},
        "predicate": "lives in",
        "object": {"type": "city", "name": "Paris"},
        "validAt": "2020",
    }
    ok(gql(ASSERT, alice, facts=[paris]))
    [span] = harvest(gql, alice, [SENTENCE], observedAt="2026-12-05T10:00:00Z")

    outcome = await drain(svc, tenant_id, "alice", workers(host, protocol))
    assert outcome.consolidated == 1
    assert outcome.closed == 1  # Berlin closed Paris, as a provided fact would have
    assert outcome.counted("facts") == 2
    assert outcome.counted("tokens_in") > 0
    assert outcome.counted("tokens_out") > 0

    # The model was shown the turn, the ontology and what is known about Alice.
    shown = json.loads(_user_message(host.seen[0], protocol))
    assert shown["turns"][0]["text"] == SENTENCE
    assert shown["ontology"]["declared"] is True
    assert [k["object"]["name"] for k in shown["known"]] == ["Paris"]

    found = {f["object"]["name"]: f for f in facts_of(gql, alice, "Alice")}
    assert set(found) == {"Berlin", "Siemens", "Paris"}
    berlin = found["Berlin"]
    assert berlin["validAt"].startswith("2026-11-01")
    assert berlin["provenance"]["origin"] == "CONSOLIDATOR"
    assert berlin["provenance"]["judgedBy"] == "model:extract_v1:local-model"
    assert berlin["provenance"]["judgedAt"] is not None
    assert berlin["provenance"]["sourceQuote"] == {
        "chunkId": span,
        "text": "I moved to Berlin last month",
    }
    assert found["Siemens"]["object"]["type"] == "organization"  # the alias, resolved
    assert found["Paris"]["invalidAt"].startswith("2026-11-01")  # closed where Berlin starts
    assert found["Paris"]["provenance"]["judgedBy"] is None

    hits = ok(gql(SEARCH, alice, q="where does Alice live"))["search"]["hits"]
    assert any("Berlin" in h["text"] for h in hits)


def _user_message(seen: Seen, protocol: Protocol) -> str:
    content: str = seen.body["messages"][-1]["content"]
    return content


async def test_a_failing_model_leaves_the_turn_recallable_without_facts(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, host: ModelHost
) -> None:
    host.answer = lambda _: anthropic_error(529, "overloaded_error", "Overloaded")
    alice = token(tenant_id, "alice", "planner")
    harvest(gql, alice, [SENTENCE])
    outcome = await drain(svc, tenant_id, "alice", workers(host, Protocol.ANTHROPIC))
    assert outcome.consolidated == 1
    assert outcome.failed == 0
    assert outcome.counted("extraction_failed") == 1
    assert len(host.seen) == 2  # retried, then given up
    assert facts_of(gql, alice, "Alice") == []
    search = """query { search(scope: USER, query: "Siemens", sources: [DOCUMENTS]) {
      hits { text } } }"""
    assert any("Siemens" in h["text"] for h in ok(gql(search, alice))["search"]["hits"])


async def test_untrusted_candidates_are_dropped_and_never_written(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, host: ModelHost
) -> None:
    # Another user's entity, a quote the turn does not hold, a made-up date: none written.
    bob = token(tenant_id, "bob", "planner")
    ok(gql(ASSERT, bob, facts=[{**BERLIN_FACT, "subject": {"type": "person", "name": "Bob"}}]))
    answer = facts_answer(
        candidate("t1", "I work at Siemens", ("person", "Bob"), "works at", ("company", "X")),
        candidate("t1", "I live in Rome", ("person", "I"), "lives in", ("city", "Rome")),
        {**SIEMENS, "validAt": "last Tuesday"},
        SIEMENS,
    )
    host.answer = lambda _: chat_completion(answer)
    alice = token(tenant_id, "alice", "planner")
    harvest(gql, alice, [SENTENCE])
    outcome = await drain(svc, tenant_id, "alice", workers(host))
    assert outcome.consolidated == 1
    assert outcome.counted("facts") == 1
    assert outcome.counted("dropped") == 3
    assert outcome.counted("dropped_unplaceable_subject") == 1
    assert outcome.counted("dropped_quote_not_in_turns") == 1
    assert outcome.counted("dropped_malformed_date") == 1
    assert [f["object"]["name"] for f in facts_of(gql, alice, "Alice")] == ["Siemens"]
    assert facts_of(gql, alice, "Bob") == []
    assert [f["object"]["name"] for f in facts_of(gql, bob, "Bob")] == ["Berlin"]


async def test_a_drawn_fact_the_write_refuses_does_not_cost_the_span(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, host: ModelHost
) -> None:
    # Alice's scope is at its fact quota: the model's fact is refused, the turn still written.
    alice = token(tenant_id, "alice", "planner")
    ok(gql(ASSERT, alice, facts=[BERLIN_FACT]))
    harvest(gql, alice, [SENTENCE])
    host.answer = lambda _: chat_completion(facts_answer(SIEMENS))
    full = replace(svc, settings=svc.settings.replace(max_scope_facts=1))
    outcome = await drain(full, tenant_id, "alice", workers(host))
    assert outcome.consolidated == 1
    assert outcome.failed == 0
    assert outcome.counted("extraction_failed") == 1
    assert [f["object"]["name"] for f in facts_of(gql, alice, "Alice")] == ["Berlin"]
    turns = """query { search(scope: USER, query: "Siemens", sources: [DOCUMENTS]) {
      hits { text } } }"""
    assert any("Siemens" in h["text"] for h in ok(gql(turns, alice))["search"]["hits"])


BERLIN_FACT = {
    "subject": {"type": "person", "name": "Alice"},
    "predicate": "lives in",
    "object": {"type": "city", "name": "Berlin"},
}


async def test_a_tenants_daily_token_cap_leaves_later_turns_without_model_facts(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, host: ModelHost
) -> None:
    host.answer = lambda _: chat_completion(facts_answer(SIEMENS), usage=(700, 100))
    capped = model(host)
    capped.tokens_per_day = 1000
    cfg = config("capped-worker", MentionsExtractor(), ProvidedExtractor(), capped)
    alice = token(tenant_id, "alice", "planner")
    bob = token(tenant_id, "bob", "planner")
    harvest(gql, alice, [SENTENCE])
    first = await drain(svc, tenant_id, "alice", cfg)
    assert first.counted("facts") == 1
    harvest(gql, bob, ["I work at Siemens now, and so does Carol."])
    host.answer = lambda _: chat_completion(facts_answer(), usage=(300, 100))
    second = await drain(svc, tenant_id, "bob", cfg)  # 800 spent: one more call may run
    assert second.counted("tokens_in") == 300
    harvest(gql, alice, ["I work at Siemens now."])
    third = await drain(svc, tenant_id, "alice", cfg)  # 1200 spent: refused
    assert third.consolidated == 1
    assert third.counted("extraction_refused") == 1
    assert len(host.seen) == 2
    # Another tenant's extraction is not held by this tenant's spending.
    other = f"{tenant_id}-b"
    harvest(gql, token(other, "alice", "planner"), [SENTENCE])
    host.answer = lambda _: chat_completion(facts_answer(SIEMENS))
    assert (await drain(svc, other, "alice", cfg)).counted("facts") == 1


class SlowMentions(MentionsExtractor):
    """The mentions extractor, slow on its first batch: that batch's write waits for it."""

    def __init__(self) -> None:
        self.calls = 0

    async def extract(self, turns: Any, scope: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            await asyncio.sleep(1.5)
        return await super().extract(turns, scope)


async def test_the_next_batchs_model_call_overlaps_this_batchs_write(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    host: ModelHost,
    neo4j_driver: Driver,
) -> None:
    written: list[int] = []

    def answer(seen: Seen) -> Any:
        records, _, _ = neo4j_driver.execute_query(TURNS_OF, tenant=tenant_id)
        written.append(records[0]["n"])
        return chat_completion(facts_answer(SIEMENS))

    host.answer = answer
    alice = token(tenant_id, "alice", "planner")
    harvest(gql, alice, [SENTENCE, "I work at Siemens now, they said."])
    cfg = replace(config("overlap", SlowMentions(), ProvidedExtractor(), model(host)), batch_size=1)
    outcome = await drain(svc, tenant_id, "alice", cfg)
    assert outcome.consolidated == 2
    assert outcome.counted("facts") == 2
    # The second batch's call was made while the first batch was still being written.
    assert written == [0, 0]


TURNS_OF = """MATCH (c:Chunk {type: 'turn'}) WHERE c.tenant_id = $tenant RETURN count(c) AS n"""
