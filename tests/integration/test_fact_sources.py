"""Facts with several sources: a re-assertion from another span adds a source, deleting a
document withdraws its sources everywhere the caller reaches, and a fact goes with its last."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.cypher.schema import MIGRATE_FACT_SOURCES
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from tests.integration.answers import ok
from tests.integration.conftest import Gql

ALL = [Scope.AGENT, Scope.USER, Scope.TENANT]
IMPORT = """mutation($m: String!, $scope: Scope! = USER) {
  importDocument(scope: $scope, markdown: $m) { summary { id } chunks { id text } } }"""
DELETE = """mutation($id: ID!, $scope: Scope! = USER) { deleteDocument(scope: $scope, id: $id)
  { chunksDeleted factSourcesRemoved factsRemoved } }"""
FACT_FIELDS = """id scope provenance { sourceQuote { chunkId start end text } }
  sources { chunkId documentId start end text originScope addedAt }"""
ASSERT = (
    """mutation($facts: [FactInput!]!, $scope: Scope! = USER, $place: Boolean! = false) {
  assertFacts(scope: $scope, facts: $facts, place: $place) { created fact { """
    + FACT_FIELDS
    + " } } }"
)
FACT = "query($id: ID!, $scope: Scope!) { fact(scope: $scope, id: $id) { " + FACT_FIELDS + "} }"
ENTITIES = "query($scope: Scope!) { entities(scope: $scope) { items { name } } }"
ONTOLOGY = "# Tenant ontology\nstatus: confirmed\n\n## service\nscope: tenant\n"


@pytest.fixture
def org(token: Callable[..., str], gql: Gql) -> dict[str, Any]:
    tenant = f"src-{uuid.uuid4().hex[:8]}"
    admin = token(tenant, "root", None, admin=True)
    ok(gql("mutation($m: String!) { setOntology(markdown: $m) { status } }", admin, m=ONTOLOGY))

    def member(user: str) -> str:
        return token(tenant, user, "planner", memory_scopes=ALL, sql_scopes=ALL)

    return {"tenant": tenant, "admin": admin, "member": member}


def document(gql: Gql, who: str, text: str) -> tuple[str, str]:
    doc = ok(gql(IMPORT, who, m=f"# Notes\n\n{text}\n"))["importDocument"]
    return doc["summary"]["id"], doc["chunks"][1]["id"]


def quoted(chunk: str, start: int, end: int, name: str = "ledger") -> dict[str, Any]:
    return {
        "subject": {"type": "service", "name": name},
        "predicate": "runs on",
        "objectValue": "kubernetes",
        "source": {"chunkId": chunk, "start": start, "end": end},
    }


def assert_one(gql: Gql, who: str, item: dict[str, Any], **kw: Any) -> dict[str, Any]:
    [written] = ok(gql(ASSERT, who, facts=[item], **kw))["assertFacts"]
    return dict(written)


def test_a_second_span_adds_a_source_and_the_fact_goes_with_the_last(
    gql: Gql, org: dict[str, Any], neo4j_driver: Driver
) -> None:
    alice = org["member"]("alice")
    doc_a, chunk_a = document(gql, alice, "The ledger runs on kubernetes.")
    doc_b, chunk_b = document(gql, alice, "Yes, ledger is on kubernetes now.")
    first = assert_one(gql, alice, quoted(chunk_a, 4, 10))
    again = assert_one(gql, alice, quoted(chunk_a, 4, 10))
    second = assert_one(gql, alice, quoted(chunk_b, 5, 11))
    assert first["created"] is True
    assert again["created"] is False
    assert second["created"] is False
    fact_id = first["fact"]["id"]
    assert again["fact"]["id"] == second["fact"]["id"] == fact_id
    sources = second["fact"]["sources"]
    assert [(s["chunkId"], s["text"], s["documentId"]) for s in sources] == [
        (chunk_a, "ledger", doc_a),
        (chunk_b, "ledger", doc_b),
    ]
    assert {s["originScope"] for s in sources} == {"USER"}

    removed = ok(gql(DELETE, alice, id=doc_a))["deleteDocument"]
    assert removed["factSourcesRemoved"] == 1
    assert removed["factsRemoved"] == 0
    left = ok(gql(FACT, alice, id=fact_id, scope="USER"))["fact"]
    assert [s["chunkId"] for s in left["sources"]] == [chunk_b]
    assert left["provenance"]["sourceQuote"]["chunkId"] == chunk_b

    removed = ok(gql(DELETE, alice, id=doc_b))["deleteDocument"]
    assert removed == {"chunksDeleted": 2, "factSourcesRemoved": 1, "factsRemoved": 1}
    assert ok(gql(FACT, alice, id=fact_id, scope="USER"))["fact"] is None
    # Both ends of the fact were only its ends: they go with it.
    assert ok(gql(ENTITIES, alice, scope="USER"))["entities"]["items"] == []
    # No term statistic of the scope keeps a word of what was deleted.
    key = scope_key(org["tenant"], Scope.USER, "alice")
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (s:TermStats {scope_key: $key}) WHERE s.term IN ['ledger', 'kubernet'] "
        "RETURN count(s) AS n",
        key=key,
    )
    assert records[0]["n"] == 0


def test_a_fact_without_sources_is_not_touched_by_deleting_documents(
    gql: Gql, org: dict[str, Any]
) -> None:
    alice = org["member"]("alice")
    doc, chunk = document(gql, alice, "The ledger runs on kubernetes.")
    direct = assert_one(gql, alice, {**quoted(chunk, 4, 10, "billing"), "source": None})
    quoted_fact = assert_one(gql, alice, quoted(chunk, 4, 10))
    assert direct["fact"]["sources"] == []
    assert direct["fact"]["provenance"]["sourceQuote"] is None
    removed = ok(gql(DELETE, alice, id=doc))["deleteDocument"]
    assert (removed["factSourcesRemoved"], removed["factsRemoved"]) == (1, 1)
    assert ok(gql(FACT, alice, id=direct["fact"]["id"], scope="USER"))["fact"]["sources"] == []
    assert ok(gql(FACT, alice, id=quoted_fact["fact"]["id"], scope="USER"))["fact"] is None


def test_tenant_fact_attested_by_two_users_keeps_the_other_users_source(
    gql: Gql, org: dict[str, Any]
) -> None:
    alice, bob = org["member"]("alice"), org["member"]("bob")
    doc_a, chunk_a = document(gql, alice, "The ledger runs on kubernetes.")
    doc_b, chunk_b = document(gql, bob, "Our ledger is kubernetes-hosted.")
    placed = assert_one(gql, alice, quoted(chunk_a, 4, 10), place=True)
    assert placed["fact"]["scope"] == "TENANT"
    by_bob = assert_one(gql, bob, quoted(chunk_b, 4, 10), place=True)
    assert by_bob["fact"]["id"] == placed["fact"]["id"]
    assert [s["text"] for s in by_bob["fact"]["sources"]] == ["ledger", "ledger"]

    # Alice deletes her document: her quote leaves the tenant's fact, Bob's stays.
    removed = ok(gql(DELETE, alice, id=doc_a))["deleteDocument"]
    assert (removed["factSourcesRemoved"], removed["factsRemoved"]) == (1, 0)
    fact = ok(gql(FACT, bob, id=placed["fact"]["id"], scope="TENANT"))["fact"]
    assert [s["chunkId"] for s in fact["sources"]] == [chunk_b]

    removed = ok(gql(DELETE, bob, id=doc_b))["deleteDocument"]
    assert (removed["factSourcesRemoved"], removed["factsRemoved"]) == (1, 1)
    assert ok(gql(FACT, bob, id=placed["fact"]["id"], scope="TENANT"))["fact"] is None
    assert ok(gql(ENTITIES, bob, scope="TENANT"))["entities"]["items"] == []


def test_a_legacy_quote_on_the_fact_becomes_a_source_at_start_up(
    gql: Gql, org: dict[str, Any], neo4j_driver: Driver
) -> None:
    alice = org["member"]("alice")
    _, chunk = document(gql, alice, "The ledger runs on kubernetes.")
    direct = assert_one(gql, alice, {**quoted(chunk, 4, 10), "source": None})
    fact_id = direct["fact"]["id"]
    # How facts stored their one quote before sources were nodes.
    neo4j_driver.execute_query(
        "MATCH ()-[f:FACT {id: $id}]->() SET f.source_chunk_id = $chunk, f.source_start = 4, "
        "f.source_end = 10, f.source_text = 'ledger'",
        id=fact_id,
        chunk=chunk,
    )
    while neo4j_driver.execute_query(MIGRATE_FACT_SOURCES.text).records[0]["migrated"]:
        pass
    fact = ok(gql(FACT, alice, id=fact_id, scope="USER"))["fact"]
    assert [(s["chunkId"], s["text"], s["originScope"]) for s in fact["sources"]] == [
        (chunk, "ledger", "USER")
    ]
    left, _, _ = neo4j_driver.execute_query(
        "MATCH ()-[f:FACT {id: $id}]->() RETURN f.source_text AS text", id=fact_id
    )
    assert left[0]["text"] is None
