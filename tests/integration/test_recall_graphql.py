"""Hybrid recall through GraphQL on the real Neo4j: legs, fusion, filters, scopes."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable

import pytest

from palimpsest.config import Settings
from palimpsest.embedding import Embedder, load_embedder
from palimpsest.identity import Scope
from tests.integration.answers import ok
from tests.integration.conftest import Gql

RECALL = """query($q: String!, $sources: [Source!], $when: WhenInput, $k: Int! = 10,
  $also: [Scope!], $prefix: String! = "") {
  recall(scope: USER, query: $q, topK: $k, sources: $sources, when: $when, alsoScopes: $also,
         prefix: $prefix) {
    sourcesApplied scopes timeFilter { mode inWindow outOfWindow undated slackSeconds }
    hits { kind scope id text score cosine vectorRank fulltextRank key documentId
           provenance { origin run } fact { id validAt } } } }"""
SEARCH = RECALL.replace("recall(", "search(").replace("  recall", "  search")
SET = """mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v,
  embed: true) { key } }"""
SET_TENANT = """mutation($k: String!, $v: JSON!) { memorySet(scope: TENANT, key: $k, value: $v,
  embed: true) { key } }"""
ASSERT = """mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts, place: false)
  { fact { id } } }"""
IMPORT = """mutation($m: String!, $at: Instant) { importDocument(scope: USER, markdown: $m,
  observedAt: $at) { summary { id } } }"""


@pytest.fixture(scope="module")
def embedder(settings: Settings) -> Embedder:
    return load_embedder(
        settings.embedding.model,
        settings.embedding.dimensions,
        settings.model_dir,
        settings.embedding.threads,
    )


@pytest.fixture
def who(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "planner", memory_scopes=[Scope.USER, Scope.TENANT])


@pytest.fixture
def seeded(gql: Gql, who: str) -> str:
    ok(gql(SET, who, k="pets/cat", v="Alice's cat Miso loves sardines"))
    ok(gql(SET, who, k="work/laptop", v="Alice uses a ThinkPad X1 for work"))
    ok(
        gql(
            ASSERT,
            who,
            facts=[
                {
                    "subject": {"type": "person", "name": "Alice"},
                    "predicate": "lives in",
                    "objectValue": "Lisbon",
                    "validAt": "2021",
                },
                {
                    "subject": {"type": "person", "name": "Alice"},
                    "predicate": "lived in",
                    "objectValue": "Porto",
                    "validAt": "2015",
                    "invalidAt": "2021",
                },
            ],
        )
    )
    ok(
        gql(
            IMPORT,
            who,
            m="# Trip\n\nWe hiked the Douro valley in October.\n",
            at="2023-10-03T12:00:00Z",
        )
    )
    return who


def test_recall_fuses_legs_and_reports_ranks(gql: Gql, seeded: str, embedder: Embedder) -> None:
    result = ok(gql(RECALL, seeded, q="what does the cat like to eat"))["recall"]
    assert result["sourcesApplied"] is True
    assert result["timeFilter"] is None
    top = result["hits"][0]
    assert (top["kind"], top["key"]) == ("NOTES", "pets/cat")
    # The raw cosine, untouched: the same model here gives the same number.
    query, note = embedder.embed(
        ["what does the cat like to eat", "Alice's cat Miso loves sardines"]
    )
    expected = sum(a * b for a, b in zip(query, note, strict=True)) / (
        math.sqrt(sum(a * a for a in query)) * math.sqrt(sum(b * b for b in note))
    )
    assert top["cosine"] == pytest.approx(expected, abs=1e-4)
    assert top["vectorRank"] == 1
    assert top["score"] == pytest.approx(
        sum(1 / (60 + r) for r in (top["vectorRank"], top["fulltextRank"]) if r)
    )
    assert top["provenance"]["origin"] == "AGENT"
    # recall's default sources are facts and notes: document prose stays out.
    assert {h["kind"] for h in result["hits"]} <= {"FACTS", "NOTES"}


def test_sources_select_exactly_and_search_includes_documents(gql: Gql, seeded: str) -> None:
    docs = ok(gql(RECALL, seeded, q="hiking in the Douro valley", sources=["DOCUMENTS"]))
    assert {h["kind"] for h in docs["recall"]["hits"]} == {"DOCUMENTS"}
    everything = ok(gql(SEARCH, seeded, q="Douro valley hike"))["search"]
    assert everything["hits"][0]["kind"] == "DOCUMENTS"
    empty = gql(RECALL, seeded, q="x", sources=[])
    assert empty["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert "data" not in empty or empty["data"] is None


def test_as_of_is_a_hard_filter_on_facts(gql: Gql, seeded: str) -> None:
    facts_only = ["FACTS"]
    now = ok(gql(RECALL, seeded, q="where does Alice live", sources=facts_only))["recall"]
    assert [h["text"] for h in now["hits"]] == ["Alice lives in Lisbon"]
    past = ok(
        gql(RECALL, seeded, q="where does Alice live", sources=facts_only, when={"asOf": "2018"})
    )["recall"]
    assert [h["text"] for h in past["hits"]] == ["Alice lived in Porto"]
    assert past["timeFilter"]["mode"] == "AS_OF"
    # Lisbon (valid from 2021) was a candidate the time view dropped.
    assert past["timeFilter"]["inWindow"] == 1
    assert past["timeFilter"]["outOfWindow"] == 1


def test_observed_window_prefer_and_require(gql: Gql, seeded: str) -> None:
    window = {"from": "2023-10-03", "to": "2023-10-04"}
    prefer = ok(gql(SEARCH, seeded, q="Douro valley October hike", when=window))["search"]
    assert prefer["timeFilter"]["mode"] == "PREFER"
    assert prefer["hits"][0]["kind"] == "DOCUMENTS"
    assert prefer["timeFilter"]["undated"] > 0  # notes and facts stay, ranked after
    require = ok(
        gql(
            SEARCH,
            seeded,
            q="Douro valley October hike",
            when={**window, "missing": "REQUIRE", "slack": "0h"},
        )
    )["search"]
    assert {h["kind"] for h in require["hits"]} == {"DOCUMENTS"}
    outside = ok(
        gql(SEARCH, seeded, q="Douro valley", when={"from": "2024-01-01", "missing": "REQUIRE"})
    )["search"]
    assert outside["hits"] == []
    assert outside["timeFilter"]["outOfWindow"] >= 1
    for bad in ({"from": "2024", "to": "2023"}, {"slack": "soon"}, {"asOf": "later"}):
        body = gql(SEARCH, seeded, q="x", when=bad)
        assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"


def test_scope_isolation_and_explicit_fold(
    gql: Gql, seeded: str, token: Callable[..., str]
) -> None:
    ok(gql(SET_TENANT, seeded, k="policy/pets", v="Office policy: cats are welcome on Fridays"))
    own = ok(gql(RECALL, seeded, q="cats welcome office"))["recall"]
    assert {h["scope"] for h in own["hits"]} == {"USER"}
    folded = ok(gql(RECALL, seeded, q="cats welcome office", also=["TENANT"]))["recall"]
    assert folded["scopes"] == ["USER", "TENANT"]
    assert ("TENANT", "policy/pets") in {(h["scope"], h["key"]) for h in folded["hits"]}
    stranger = token(f"other-{uuid.uuid4().hex[:6]}", "alice", "planner")
    assert ok(gql(RECALL, stranger, q="Miso sardines cat"))["recall"]["hits"] == []


def test_user_text_cannot_break_or_widen_the_full_text_leg(gql: Gql, seeded: str) -> None:
    for hostile in ("scope_key:* OR *:*", '"unbalanced (', "\\", "AND OR NOT", "~~~ ^2 {a TO b}"):
        body = ok(gql(RECALL, seeded, q=hostile))["recall"]
        assert all(h["scope"] == "USER" for h in body["hits"])


def test_prefix_and_top_k_bounds(gql: Gql, seeded: str) -> None:
    pets = ok(gql(RECALL, seeded, q="Alice", sources=["NOTES"], prefix="pets/"))["recall"]
    assert [h["key"] for h in pets["hits"]] == ["pets/cat"]
    for k in (0, 51):
        body = gql(RECALL, seeded, q="Alice", k=k)
        assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
