"""What a placed fact carries out of the writer's scope: what the fact says, or a quote the
runtime marked shareable, never the rest of the span it was taken from.

Canaries are planted around the fact's words in USER spans; after harvest, consolidation
and placed ``assertFacts``, a scan of every property of every node and relationship finds
each canary only under the writer's own USER ``scope_key``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.cypher.indexes import apply_schema
from palimpsest.identity import Scope
from palimpsest.identity.acting import act_for_user
from palimpsest.identity.scopes import resolve_scope, scope_key
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import HARVEST, drain

ONTOLOGY = """# Tenant ontology
status: confirmed

## service
scope: tenant

## tool
scope: agent

## person
scope: user
"""
SET_ONTOLOGY = "mutation($m: String!) { setOntology(markdown: $m) { status } }"
SOURCES = """chunkId start end text originScope"""
FACTS = (
    """query($scope: Scope!, $type: String!, $name: String!) {
  facts(scope: $scope, subject: {type: $type, name: $name}) { items { text
    provenance { sourceQuote { chunkId start end text } } sources { """
    + SOURCES
    + " } } } }"
)
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  chunks { id type text } } }"""
ASSERT = (
    """mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts, place: true) {
  placement { scope } fact { scope sources { """
    + SOURCES
    + " } } } }"
)
# Every string (or string list) property of every node and relationship, with its scope.
EVERY_PROPERTY = """
CALL () {
  MATCH (n) UNWIND keys(n) AS k RETURN n.scope_key AS scope_key, n[k] AS value
  UNION ALL
  MATCH ()-[r]->() UNWIND keys(r) AS k RETURN r.scope_key AS scope_key, r[k] AS value
}
WITH scope_key, value
WHERE value IS :: STRING OR value IS :: LIST<STRING NOT NULL>
WITH scope_key, CASE WHEN value IS :: STRING THEN [value] ELSE value END AS texts
UNWIND texts AS text
WITH scope_key, text WHERE any(c IN $canaries WHERE text CONTAINS c)
RETURN DISTINCT scope_key
"""


def canary() -> str:
    return f"cnry{uuid.uuid4().hex[:20]}"


def fact(kind: str, name: str, predicate: str, value: str, **more: Any) -> dict[str, Any]:
    return {
        "subject": {"type": kind, "name": name},
        "predicate": predicate,
        "objectValue": value,
        **more,
    }


def scopes_holding(driver: Driver, canaries: list[str]) -> set[str | None]:
    records, _, _ = driver.execute_query(EVERY_PROPERTY, canaries=canaries)
    return {r["scope_key"] for r in records}


def user_key(tenant: str, user: str) -> str:
    return resolve_scope(act_for_user(tenant, user), Scope.USER).scope_key


def facts_of(gql: Gql, who: str, scope: str, kind: str, name: str) -> list[dict[str, Any]]:
    found = ok(gql(FACTS, who, scope=scope, type=kind, name=name))["facts"]["items"]
    return list(found)


@pytest.fixture
def org(gql: Gql, token: Callable[..., str]) -> dict[str, Any]:
    tenant = f"qt-{uuid.uuid4().hex[:10]}"
    ok(gql(SET_ONTOLOGY, token(tenant, "root", None, admin=True), m=ONTOLOGY))
    reach = [Scope.AGENT, Scope.USER, Scope.TENANT]

    def member(user: str) -> str:
        return str(token(tenant, user, "planner", memory_scopes=reach, sql_scopes=reach))

    return {"tenant": tenant, "member": member}


async def test_harvested_facts_carry_no_private_words_into_shared_scopes(
    gql: Gql, org: dict[str, Any], svc: Services, neo4j_driver: Driver
) -> None:
    alice, bob, carol = (org["member"](u) for u in ("alice", "bob", "carol"))
    c = [canary() for _ in range(4)]
    text = (
        f"{c[0]} checkout-api runs on kubernetes, {c[1]} and billing-api is written in rust "
        f"{c[2]}; ruff lints python {c[3]} and I prefer green tea."
    )
    shared_words = "billing-api is written in rust"
    span = {
        "text": text,
        "speaker": "Alice",
        "sourceId": "s1",
        "facts": [
            fact("service", "checkout-api", "runs on", "kubernetes"),
            fact(
                "service", "billing-api", "written in", "rust", quote=shared_words, shareQuote=True
            ),
            fact("tool", "ruff", "lints", "python"),
            fact("person", "Alice", "prefers", "green tea"),
        ],
    }
    [span_id] = ok(gql(HARVEST, alice, spans=[span], gen=1))["harvest"]["spanIds"]
    assert (await drain(svc, org["tenant"], "alice")).consolidated == 1

    # Only Alice's own scope holds any canary, in any property of any node or relationship.
    assert scopes_holding(neo4j_driver, c) == {user_key(org["tenant"], "alice")}

    turn = f"Alice: {text}"
    whole = {"chunkId": span_id, "start": len("Alice: "), "end": len(turn)}
    # Another member of the tenant reads the placed fact and a reference without text.
    [placed] = facts_of(gql, bob, "TENANT", "service", "checkout-api")
    assert placed["sources"] == [{**whole, "text": None, "originScope": "USER"}]
    assert placed["provenance"]["sourceQuote"] == {**whole, "text": None}
    # The quote the runtime marked shareable goes along, narrowed to its words.
    at = turn.index(shared_words)
    narrowed = {"chunkId": span_id, "start": at, "end": at + len(shared_words)}
    [marked] = facts_of(gql, bob, "TENANT", "service", "billing-api")
    assert marked["sources"] == [{**narrowed, "text": shared_words, "originScope": "USER"}]
    # Another user of the agent sees the agent's fact, not Alice's words around it.
    [tool] = facts_of(gql, carol, "AGENT", "tool", "ruff")
    assert tool["sources"] == [{**whole, "text": None, "originScope": "USER"}]
    # In the span's own scope the quote still reads in full.
    [kept] = facts_of(gql, alice, "USER", "person", "Alice")
    assert kept["sources"] == [{**whole, "text": text, "originScope": "USER"}]


async def test_placed_assert_facts_carry_no_private_words_into_the_tenant(
    gql: Gql, org: dict[str, Any], neo4j_driver: Driver
) -> None:
    alice, bob = org["member"]("alice"), org["member"]("bob")
    c = [canary() for _ in range(2)]
    doc = ok(gql(IMPORT, alice, m=f"# Notes\n\n{c[0]} The ledger runs on rails {c[1]}.\n"))
    para = next(x for x in doc["importDocument"]["chunks"] if x["type"] == "PARAGRAPH")
    whole = {"chunkId": para["id"], "start": 0, "end": len(para["text"])}
    written = ok(
        gql(
            ASSERT,
            alice,
            facts=[
                fact("service", "ledger", "runs on", "rails", source=whole),
                # A quote within what the fact says goes along without being marked.
                fact(
                    "service",
                    "payments",
                    "runs on",
                    "rails",
                    source=whole,
                    text="payments: the ledger runs on rails",
                    quote="ledger runs on rails",
                ),
            ],
        )
    )["assertFacts"]
    assert [w["placement"]["scope"] for w in written] == ["TENANT", "TENANT"]
    at = para["text"].index("ledger runs on rails")
    assert [w["fact"]["sources"] for w in written] == [
        [{**whole, "text": None, "originScope": "USER"}],
        [
            {
                "chunkId": para["id"],
                "start": at,
                "end": at + len("ledger runs on rails"),
                "text": "ledger runs on rails",
                "originScope": "USER",
            }
        ],
    ]
    assert scopes_holding(neo4j_driver, c) == {user_key(org["tenant"], "alice")}
    [seen] = facts_of(gql, bob, "TENANT", "service", "ledger")
    assert seen["sources"][0]["text"] is None


def test_a_quote_outside_its_source_is_refused_and_changes_nothing(
    gql: Gql, org: dict[str, Any]
) -> None:
    alice = org["member"]("alice")
    doc = ok(gql(IMPORT, alice, m="# Notes\n\nThe ledger runs on rails.\n"))
    para = next(x for x in doc["importDocument"]["chunks"] if x["type"] == "PARAGRAPH")
    source = {"chunkId": para["id"], "start": 4, "end": 10}
    outside = fact("service", "ledger", "runs on", "rails", source=source, quote="rails")
    body = gql(ASSERT, alice, facts=[outside])
    assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert body["errors"][0]["message"] == "facts[0].quote is not a part of the source span"
    assert facts_of(gql, alice, "TENANT", "service", "ledger") == []
    no_source = fact("service", "ledger", "runs on", "rails", quote="ledger")
    body = gql(ASSERT, alice, facts=[no_source])
    assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert body["errors"][0]["message"] == "facts[0].quote narrows a source: give source too"
    span = {"text": "the ledger runs on rails", "facts": [{**no_source, "quote": "trains"}]}
    body = gql(HARVEST, alice, spans=[span], gen=1)
    assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert body["errors"][0]["message"] == (
        "spans[0].facts[0].quote must be a part of the span's text"
    )
    assert ok(gql("{ pendingWork { queued done } }", alice))["pendingWork"] == {
        "queued": 0,
        "done": 0,
    }


async def test_start_up_withholds_whole_span_quotes_stored_in_shared_scopes(
    gql: Gql, org: dict[str, Any], svc: Services, settings: Settings, neo4j_driver: Driver
) -> None:
    alice = org["member"]("alice")
    c = canary()
    doc = ok(gql(IMPORT, alice, m=f"# Notes\n\n{c} The ledger runs on rails.\n"))
    para = next(x for x in doc["importDocument"]["chunks"] if x["type"] == "PARAGRAPH")
    whole = {"chunkId": para["id"], "start": 0, "end": len(para["text"])}
    name = {"chunkId": para["id"], "start": para["text"].index("ledger"), "end": 0}
    name["end"] = name["start"] + len("ledger")
    ok(
        gql(
            ASSERT,
            alice,
            facts=[
                fact("service", "ledger", "runs on", "rails", source=whole),
                fact("service", "ledger", "runs on", "rails", source=name),
            ],
        )
    )
    # As an earlier version stored them: the quoted text, and no decision about sharing.
    neo4j_driver.execute_query(
        "MATCH (x:Source {chunk_id: $id}) WHERE x.scope_key <> x.origin_key "
        "SET x.text = CASE WHEN x.start = 0 THEN $text ELSE 'ledger' END REMOVE x.shared",
        id=para["id"],
        text=para["text"],
    )
    tenant_key = scope_key(org["tenant"], Scope.TENANT, org["tenant"])
    assert tenant_key in scopes_holding(neo4j_driver, [c])

    await apply_schema(svc.db, settings.embedding.model, settings.embedding.dimensions)

    assert scopes_holding(neo4j_driver, [c]) == {user_key(org["tenant"], "alice")}
    [placed] = facts_of(gql, alice, "TENANT", "service", "ledger")
    assert sorted((s["start"], s["text"]) for s in placed["sources"]) == [
        (0, None),
        (name["start"], "ledger"),  # the fact's own name says no more than the fact
    ]
