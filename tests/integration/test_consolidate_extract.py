"""What the extractors make of consolidated spans, on the real Neo4j: mention edges inside the
turn's own scope, and candidate facts placed through the ontology as ``assertFacts`` would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.identity import Scope
from palimpsest.ontology.extractors import candidates
from palimpsest.resolvers.cycle.consolidate import SCAN_ENTITIES
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import HARVEST, drain

ASSERT = """mutation($scope: Scope!, $facts: [FactInput!]!) {
  assertFacts(scope: $scope, facts: $facts, place: false) { fact { subject { id } } } }"""
ALIASES = """mutation($id: ID!, $aliases: [String!]!) {
  setEntityAliases(scope: USER, id: $id, aliases: $aliases) { id name aliases } }"""
ENTITIES = """query($name: String) { entities(scope: USER, name: $name) { items { id type name
  provenance { origin compactionGeneration session run } } } }"""
GRAPH = """query($ids: [ID!]) { graphRecall(scope: USER, seedIds: $ids, hops: 0)
  { chunks { id text provenance { origin compactionGeneration session } } } }"""
FACTS = """query($scope: Scope!, $type: String!, $name: String!) {
  facts(scope: $scope, subject: {type: $type, name: $name}) { items { predicate text observedAt
    provenance { origin compactionGeneration session sourceQuote { chunkId start end text } }
  } } }"""
SET_ONTOLOGY = "mutation($m: String!) { setOntology(markdown: $m) { status } }"
ONTOLOGY = """# Tenant ontology
status: confirmed

## service
scope: tenant

## person
scope: user
"""
MENTIONED = """
MATCH (c:Chunk {id: $chunk})-[m:MENTIONS]->(e:Entity)
RETURN e.name AS name, e.type AS type, e.scope AS scope, m.start AS start, m.end AS end
ORDER BY name
"""


def facts_of(gql: Gql, who: str, scope: str, kind: str, name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ok(gql(FACTS, who, scope=scope, type=kind, name=name))["facts"][
        "items"
    ]
    return found


def fact(kind: str, name: str, predicate: str, value: str) -> dict[str, Any]:
    return {"subject": {"type": kind, "name": name}, "predicate": predicate, "objectValue": value}


# A long turn: more word runs than ``SCAN_ENTITIES``, so its names are matched against the
# scope's entities read whole, not sent to the database (the same mentions either way).
PADDING = " ".join(f"w{i}" for i in range(400))


@pytest.mark.parametrize("pad", [False, True], ids=["short", "long"])
async def test_turns_mention_the_entities_of_their_own_scope_by_name_and_alias(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    svc: Services,
    neo4j_driver: Driver,
    pad: bool,
) -> None:
    alice = token(tenant_id, "alice", "planner", session="chat-1", run="run-1")
    user_facts = [
        fact("pet", "Miso", "likes", "sardines"),
        fact("person", "Ada Lovelace", "wrote", "notes"),
    ]
    written = ok(gql(ASSERT, alice, scope="USER", facts=user_facts))["assertFacts"]
    ada_id = written[1]["fact"]["subject"]["id"]
    ok(gql(ALIASES, alice, id=ada_id, aliases=["the Countess", "Ada"]))
    ok(gql(ASSERT, alice, scope="TENANT", facts=[fact("city", "Lisbon", "is in", "Portugal")]))

    text = "The countess says Miso moved to Lisbon and eats sardines; Adamant as ever."
    if pad:
        text += " " + PADDING
    assert (len(candidates(text)) > SCAN_ENTITIES) is pad
    receipt = ok(
        gql(HARVEST, alice, spans=[{"text": text, "speaker": "Bob", "sourceId": "1"}], gen=3)
    )["harvest"]
    [span] = receipt["spanIds"]
    assert (await drain(svc, tenant_id, "alice")).consolidated == 1

    records, _, _ = neo4j_driver.execute_query(MENTIONED, chunk=span)
    turn = f"Bob: {text}"
    at = turn.index("The countess")
    assert [dict(r) for r in records] == [
        # by alias, any case, on word boundaries ("Adamant" does not name Ada)
        {"name": "Ada Lovelace", "type": "person", "scope": "USER", "start": at, "end": at + 12},
        {"name": "Bob", "type": "person", "scope": "USER", "start": 0, "end": 3},  # the speaker
        {
            "name": "Miso",
            "type": "pet",
            "scope": "USER",
            "start": turn.index("Miso"),
            "end": turn.index("Miso") + 4,
        },
    ]  # not Lisbon (another scope), not sardines (a literal value)

    [bob] = ok(gql(ENTITIES, alice, name="bob"))["entities"]["items"]
    assert bob["provenance"] == {
        "origin": "COMPACTION",
        "compactionGeneration": 3,
        "session": "chat-1",
        "run": "run-1",
    }
    [miso] = ok(gql(ENTITIES, alice, name="miso"))["entities"]["items"]
    chunks = ok(gql(GRAPH, alice, ids=[miso["id"]]))["graphRecall"]["chunks"]
    assert [c["id"] for c in chunks] == [span]
    assert chunks[0]["provenance"] == {
        "origin": "COMPACTION",
        "compactionGeneration": 3,
        "session": "chat-1",
    }


async def test_candidate_facts_are_placed_like_assert_facts_quoting_the_span(
    gql: Gql, token: Callable[..., str], tenant_id: str, svc: Services, neo4j_driver: Driver
) -> None:
    admin = token(tenant_id, "root", None, admin=True)
    ok(gql(SET_ONTOLOGY, admin, m=ONTOLOGY))
    granted = [Scope.USER, Scope.TENANT]
    alice = token(tenant_id, "alice", "planner", memory_scopes=granted, sql_scopes=granted)
    text = "checkout-api runs on Kubernetes now, and I prefer green tea."
    span: dict[str, Any] = {
        "text": text,
        "speaker": "Alice",
        "sourceId": "s1",
        "observedAt": "2025-02-03T09:00:00Z",
        "facts": [
            fact("service", "checkout-api", "runs on", "Kubernetes"),
            fact("person", "Alice", "prefers", "green tea"),
        ],
    }
    [span_id] = ok(gql(HARVEST, alice, spans=[span], gen=5))["harvest"]["spanIds"]
    # Bob's run may not reach TENANT on the SQL plane: his service fact stays home.
    bob = token(tenant_id, "bob", "planner", memory_scopes=granted)
    bob_span = {**span, "facts": [fact("service", "billing", "runs on", "VMs")]}
    [bob_span_id] = ok(gql(HARVEST, bob, spans=[bob_span], gen=5))["harvest"]["spanIds"]
    assert (await drain(svc, tenant_id, "alice")).consolidated == 1
    assert (await drain(svc, tenant_id, "bob")).consolidated == 1

    quote = {"chunkId": span_id, "start": len("Alice: "), "end": len("Alice: ") + len(text)}
    [placed] = facts_of(gql, alice, "TENANT", "service", "checkout-api")
    assert placed["provenance"]["origin"] == "COMPACTION"
    assert placed["provenance"]["compactionGeneration"] == 5
    # The span says more than the fact: only a reference to it goes to the tenant.
    assert placed["provenance"]["sourceQuote"] == {**quote, "text": None}
    assert placed["observedAt"].startswith("2025-02-03T09:00:00")
    [kept] = facts_of(gql, alice, "USER", "person", "Alice")
    assert kept["provenance"]["sourceQuote"] == {**quote, "text": text}
    assert facts_of(gql, alice, "USER", "service", "checkout-api") == []

    stayed = facts_of(gql, bob, "USER", "service", "billing")
    assert [f["predicate"] for f in stayed] == ["runs on"]
    assert stayed[0]["provenance"]["sourceQuote"]["chunkId"] == bob_span_id
    assert facts_of(gql, bob, "TENANT", "service", "billing") == []

    # The turn mentions the fact's subject only where the fact stayed in the turn's scope.
    records, _, _ = neo4j_driver.execute_query(MENTIONED, chunk=span_id)
    assert {(r["name"], r["scope"]) for r in records} == {("Alice", "USER")}


def test_entity_aliases_are_checked_and_scoped(
    gql: Gql, token: Callable[..., str], tenant_id: str
) -> None:
    alice = token(tenant_id, "alice", "planner")
    bob = token(tenant_id, "bob", "planner")
    written = ok(gql(ASSERT, alice, scope="USER", facts=[fact("pet", "Miso", "is", "a cat")]))
    miso = written["assertFacts"][0]["fact"]["subject"]["id"]
    set_ = ok(gql(ALIASES, alice, id=miso, aliases=[" Mi  so ", "Mi so", "Kitty"]))
    assert set_["setEntityAliases"]["aliases"] == ["Mi so", "Kitty"]

    def code(body: dict[str, Any]) -> str:
        assert body.get("data") is None, body
        return str(body["errors"][0]["extensions"]["code"])

    assert code(gql(ALIASES, bob, id=miso, aliases=["x"])) == "NOT_FOUND"  # Bob's scope
    assert code(gql(ALIASES, alice, id="0" * 32, aliases=["x"])) == "NOT_FOUND"
    assert code(gql(ALIASES, alice, id=miso, aliases=["  "])) == "INVALID_ARGUMENT"
    assert code(gql(ALIASES, alice, id=miso, aliases=["a"] * 51)) == "INVALID_ARGUMENT"
    [entity] = ok(gql(ENTITIES, alice, name="miso"))["entities"]["items"]
    assert entity["id"] == miso
