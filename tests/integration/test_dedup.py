"""Near-duplicates (docs/reference/facts.md, Duplicates; docs/reference/recall.md), on Neo4j.

A fact that near-duplicates a stored one of the same scope, subject, predicate and start is
merged into it as a further source (the result says ``merged``), and recall's ``dedup`` drops
near-duplicate hits within one answer, naming the hit each one duplicated, through GraphQL
and MCP alike.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.identity import Scope
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.test_mcp import call, http_client

ALL = [Scope.AGENT, Scope.USER, Scope.TENANT]
ASSERT = (
    "mutation($facts: [FactInput!]!, $scope: Scope! = USER) {"
    " assertFacts(scope: $scope, facts: $facts, place: false)"
    " { created merged fact { id text object { name } } } }"
)
FACTS = (
    "query($scope: Scope! = USER, $p: String) { facts(scope: $scope,"
    ' subject: {type: "person", name: "Alice"}, predicate: $p, limit: 100)'
    " { items { id text object { name } } } }"
)
RECALL = (
    "query($q: String!, $dedup: Float) { recall(scope: USER, query: $q, topK: 5, "
    "sources: [FACTS], dedup: $dedup) { hits { id text explain { duplicates "
    "{ kind scope id cosine } } } } }"
)


@pytest.fixture
def member(token: Callable[..., str]) -> str:
    """A member of a tenant of its own (no ontology: every predicate many-valued)."""
    tenant = f"dedup-{uuid.uuid4().hex[:8]}"
    return token(tenant, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)


def fact(obj: str, predicate: str = "works at", **extra: Any) -> dict[str, Any]:
    return {
        "subject": {"type": "person", "name": "Alice"},
        "predicate": predicate,
        "object": {"type": "company", "name": obj},
        **extra,
    }


def assert_one(gql: Gql, who: str, item: dict[str, Any], scope: str = "USER") -> dict[str, Any]:
    [result] = ok(gql(ASSERT, who, facts=[item], scope=scope))["assertFacts"]
    return dict(result)


def stored(gql: Gql, who: str, scope: str = "USER") -> list[str]:
    return sorted(f["object"]["name"] for f in ok(gql(FACTS, who, scope=scope))["facts"]["items"])


def test_an_object_differing_only_in_punctuation_case_and_spaces_merges(
    gql: Gql, member: str
) -> None:
    first = assert_one(gql, member, fact("Acme, Inc."))
    assert first["created"] is True
    assert first["merged"] is None
    again = assert_one(gql, member, fact("acme   inc", predicate="Works  At"))
    assert again["created"] is False
    assert again["merged"] == first["fact"]["id"]
    assert again["fact"]["id"] == first["fact"]["id"]
    assert again["fact"]["object"]["name"] == "Acme, Inc."  # the kept fact, unchanged
    assert stored(gql, member) == ["Acme, Inc."]


def test_fact_text_at_the_cosine_threshold_merges_and_different_facts_do_not(
    gql: Gql, member: str
) -> None:
    # The default threshold (1.0) merges identical texts, whatever the objects are called.
    first = assert_one(gql, member, fact("Acme Corporation", text="Alice works at Acme"))
    same = assert_one(gql, member, fact("ACME Corp", text="alice works at ACME"))
    assert same["merged"] == first["fact"]["id"]
    assert same["created"] is False
    # Another object with another text is another fact; so is another start.
    other = assert_one(gql, member, fact("Globex"))
    later = assert_one(gql, member, fact("Acme Corporation", validAt="2024"))
    assert other["merged"] is None
    assert other["created"] is True
    assert later["merged"] is None
    assert later["created"] is True
    assert stored(gql, member) == ["Acme Corporation", "Acme Corporation", "Globex"]


def test_near_duplicates_within_one_batch_are_one_fact(gql: Gql, member: str) -> None:
    results = ok(gql(ASSERT, member, facts=[fact("Initech"), fact("INITECH.")]))["assertFacts"]
    assert results[0]["merged"] is None
    assert results[1]["merged"] == results[0]["fact"]["id"]
    assert stored(gql, member) == ["Initech"]


def test_another_scope_is_never_merged_into(gql: Gql, member: str) -> None:
    mine = assert_one(gql, member, fact("Umbrella"), scope="USER")
    theirs = assert_one(gql, member, fact("umbrella."), scope="AGENT")
    assert theirs["merged"] is None
    assert theirs["created"] is True
    assert theirs["fact"]["id"] != mine["fact"]["id"]
    assert stored(gql, member, "AGENT") == ["umbrella."]


def twins(gql: Gql, who: str) -> list[str]:
    """Two facts of different subjects (never merged on write) with one text, and another."""
    items = [
        {
            "subject": {"type": "pet", "name": name},
            "predicate": "is called",
            "objectValue": "Tom",
            "text": "The grey cat is called Tom",
        }
        for name in ("cat one", "cat two")
    ] + [
        {
            "subject": {"type": "pet", "name": "dog"},
            "predicate": "is called",
            "objectValue": "Rex",
            "text": "The brown dog barks at the postman",
        }
    ]
    return [r["fact"]["id"] for r in ok(gql(ASSERT, who, facts=items))["assertFacts"]]


def test_recall_dedup_drops_near_duplicate_hits_and_names_them(gql: Gql, member: str) -> None:
    one, two, dog = twins(gql, member)
    plain = ok(gql(RECALL, member, q="what is the grey cat called"))["recall"]["hits"]
    assert {one, two, dog} <= {h["id"] for h in plain}
    assert all(h["explain"]["duplicates"] == [] for h in plain)
    hits = ok(gql(RECALL, member, q="what is the grey cat called", dedup=0.99))["recall"]["hits"]
    ids = [h["id"] for h in hits]
    assert dog in ids
    kept = [h for h in hits if h["id"] in (one, two)]
    assert len(kept) == 1
    [dropped] = kept[0]["explain"]["duplicates"]
    assert dropped["id"] == ({one, two} - {kept[0]["id"]}).pop()
    assert dropped["kind"] == "FACTS"
    assert dropped["scope"] == "USER"
    assert dropped["cosine"] >= 0.99


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5])
def test_recall_dedup_outside_zero_to_one_is_refused(gql: Gql, member: str, bad: float) -> None:
    body = gql(RECALL, member, q="anything", dedup=bad)
    assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"


async def test_mcp_recall_and_search_take_dedup_through_the_same_code(
    live_server_url: str, gql: Gql, member: str
) -> None:
    one, two, _ = twins(gql, member)
    async with http_client(live_server_url, member) as client:
        plain = await call(client, "recall", query="what is the grey cat called")
        found = await call(client, "recall", query="what is the grey cat called", dedup=0.99)
        searched = await call(
            client, "search", query="what is the grey cat called", sources=["facts"], dedup=0.99
        )
    assert {one, two} <= {h["id"] for h in plain["hits"]}
    for body in (found, searched):
        kept = [h for h in body["hits"] if h["id"] in (one, two)]
        assert len(kept) == 1
        assert [d["id"] for d in kept[0]["duplicates"]] == list({one, two} - {kept[0]["id"]})


def test_a_fact_with_its_own_natural_key_is_never_merged_by_similarity(
    gql: Gql, member: str
) -> None:
    first = assert_one(gql, member, fact("Hooli"))
    named = assert_one(gql, member, fact("hooli.", naturalKey="timeline-2:hooli"))
    assert named["merged"] is None
    assert named["created"] is True
    # Two facts; their objects are one entity (spellings of one name, docs: Entities).
    assert stored(gql, member) == ["Hooli", "Hooli"]
    # Re-asserting its key is still the same fact.
    again = assert_one(gql, member, fact("hooli.", naturalKey="timeline-2:hooli"))
    assert again["fact"]["id"] == named["fact"]["id"]
    assert first["fact"]["id"] != named["fact"]["id"]
