"""Entities (docs/reference/facts.md, Entities), on the real Neo4j through GraphQL.

Spellings that differ only in case, punctuation, whitespace or a declared alias are one entity
on write; ``entityDuplicates`` lists likely duplicates with the reason and the figure;
``mergeEntities`` moves facts and mentions onto the kept entity and ``unmergeEntities``
restores facts, mentions, names and ids exactly; a foreign id answers as a missing one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.identity import Scope
from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql

ALL = [Scope.AGENT, Scope.USER, Scope.TENANT]
ASSERT = (
    "mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts, place: false)"
    " { created merged fact { id subject { id name } object { id name } } } }"
)
ENTITIES = (
    "query($type: String) { entities(scope: USER, type: $type, limit: 100)"
    " { items { id name aliases } } }"
)
DUPLICATES = (
    "query($after: String) { entityDuplicates(scope: USER, limit: 50, after: $after)"
    " { items { a { id name } b { id name } reason figure } hasMore cursor } }"
)
MERGE = (
    "mutation($keep: ID!, $merge: [ID!]!) { mergeEntities(scope: USER, keepId: $keep,"
    " mergeIds: $merge) { id name aliases } }"
)
MERGES = (
    "query($id: ID!) { entityMerges(scope: USER, entityId: $id)"
    " { id factsMoved mentionsMoved undoneAt } }"
)
UNMERGE = "mutation($id: ID!) { unmergeEntities(scope: USER, mergeId: $id) { id name } }"
ALIASES = (
    "mutation($id: ID!, $aliases: [String!]!) { setEntityAliases(scope: USER, id: $id,"
    " aliases: $aliases) { id } }"
)
IMPORT = (
    "mutation($m: String!) { importDocument(scope: USER, markdown: $m) { chunks { id text } } }"
)


@pytest.fixture
def member(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)


def works(person: str, company: str, **extra: Any) -> dict[str, Any]:
    return {
        "subject": {"type": "person", "name": person},
        "predicate": "works at",
        "object": {"type": "company", "name": company},
        **extra,
    }


def assert_facts(gql: Gql, who: str, *items: dict[str, Any]) -> list[dict[str, Any]]:
    return list(ok(gql(ASSERT, who, facts=list(items)))["assertFacts"])


def entities(gql: Gql, who: str, type_: str) -> list[dict[str, Any]]:
    return list(ok(gql(ENTITIES, who, type=type_))["entities"]["items"])


def snapshot(driver: Driver, tenant_id: str) -> dict[str, Any]:
    """Every entity, fact and mention of the tenant, as stored."""
    ents, _, _ = driver.execute_query(
        "MATCH (e) WHERE (e:Entity OR e:MergedEntity) AND e.tenant_id = $t "
        "RETURN e.id AS id, labels(e) AS labels, properties(e) AS props ORDER BY id",
        t=tenant_id,
    )
    facts, _, _ = driver.execute_query(
        "MATCH (s:Entity)-[f:FACT]->(o:Entity) WHERE f.tenant_id = $t "
        "RETURN f.id AS id, s.id AS s, o.id AS o, properties(f) AS props ORDER BY id",
        t=tenant_id,
    )
    mentions, _, _ = driver.execute_query(
        "MATCH (c)-[m:MENTIONS]->(e:Entity) WHERE e.tenant_id = $t "
        "RETURN c.id AS c, e.id AS e, properties(m) AS props ORDER BY c, e",
        t=tenant_id,
    )
    return {
        "entities": [
            (
                r["id"],
                sorted(r["labels"]),
                {k: v for k, v in r["props"].items() if k != "locked_at"},
            )
            for r in ents
        ],
        "facts": [(r["id"], r["s"], r["o"], r["props"]) for r in facts],
        "mentions": [(r["c"], r["e"], r["props"]) for r in mentions],
    }


def test_spellings_differing_in_case_punctuation_and_spaces_are_one_entity(
    gql: Gql, member: str
) -> None:
    first, second, third = assert_facts(
        gql,
        member,
        works("Alice", "Acme, Inc."),
        works("alice", "ACME  inc", validAt="2020-01-01T00:00:00Z"),
        works("Alice.", "acme-inc", validAt="2021-01-01T00:00:00Z"),
    )
    assert {first["fact"]["object"]["id"]} == {
        second["fact"]["object"]["id"],
        third["fact"]["object"]["id"],
    }
    assert {first["fact"]["subject"]["id"]} == {
        second["fact"]["subject"]["id"],
        third["fact"]["subject"]["id"],
    }
    assert [e["name"] for e in entities(gql, member, "company")] == ["Acme, Inc."]
    # A later batch finds the stored entity the same way.
    [later] = assert_facts(gql, member, works("ALICE", "Acme Inc", validAt="2022-01-01T00:00:00Z"))
    assert later["fact"]["object"]["id"] == first["fact"]["object"]["id"]
    assert len(entities(gql, member, "person")) == 1
    # Another type is another entity, and a literal value stays itself.
    assert_facts(gql, member, {**works("Alice", "x"), "object": {"type": "brand", "name": "ACME"}})
    assert len(entities(gql, member, "brand")) == 1


def test_a_declared_alias_names_the_entity_on_write(gql: Gql, member: str) -> None:
    [stored] = assert_facts(gql, member, works("Robert Smith", "Acme"))
    robert = stored["fact"]["subject"]["id"]
    ok(gql(ALIASES, member, id=robert, aliases=["Bob Smith"]))
    [again] = assert_facts(gql, member, works("bob  smith!", "Globex"))
    assert again["fact"]["subject"]["id"] == robert
    assert [e["name"] for e in entities(gql, member, "person")] == ["Robert Smith"]


def test_duplicates_are_listed_with_reason_and_figure(gql: Gql, member: str) -> None:
    assert_facts(
        gql,
        member,
        works("Jonathan Smith", "Acme"),
        works("Jonathon Smith", "Acme"),
        works("Mary Jones", "Acme"),
        {**works("Jonathan Smith", "x"), "subject": {"type": "dog", "name": "Jonathon Smyth"}},
    )
    items = ok(gql(DUPLICATES, member))["entityDuplicates"]["items"]
    assert [(d["a"]["name"], d["b"]["name"], d["reason"]) for d in items] == [
        ("Jonathan Smith", "Jonathon Smith", "EDIT_DISTANCE")
    ]
    assert items[0]["figure"] == pytest.approx(1 - 1 / 14, abs=1e-4)  # one edit in 14


def test_merge_and_unmerge_round_trip_exactly(
    gql: Gql, member: str, neo4j_driver: Driver, tenant_id: str
) -> None:
    [chunk] = [
        c["id"]
        for c in ok(gql(IMPORT, member, m="# Notes\n\nBob Smith works at Acme.\n"))[
            "importDocument"
        ]["chunks"]
        if "Bob" in c["text"]
    ]
    source = {"chunkId": chunk, "start": 0, "end": 9}
    written = assert_facts(
        gql,
        member,
        works("Robert Smith", "Acme"),
        works("Bob Smith", "Acme Corp", source=source),
        {
            **works("Bob Smith", "x"),
            "predicate": "knows",
            "object": {"type": "person", "name": "Robert Smith"},
        },
    )
    robert, bob = written[0]["fact"]["subject"]["id"], written[1]["fact"]["subject"]["id"]
    assert robert != bob
    before = snapshot(neo4j_driver, tenant_id)
    assert any(m[1] == bob for m in before["mentions"])

    kept = ok(gql(MERGE, member, keep=robert, merge=[bob]))["mergeEntities"]
    assert kept == {"id": robert, "name": "Robert Smith", "aliases": ["Bob Smith"]}
    merged = snapshot(neo4j_driver, tenant_id)
    assert {f[1] for f in merged["facts"]} == {robert}
    assert bob not in {f[2] for f in merged["facts"]}
    assert bob not in {m[1] for m in merged["mentions"]}
    assert robert in {m[1] for m in merged["mentions"]}
    assert [f[0] for f in merged["facts"]] == [f[0] for f in before["facts"]]  # ids kept
    assert [e["name"] for e in entities(gql, member, "person")] == ["Robert Smith"]
    # A later write of the merged spelling means the kept entity.
    [later] = assert_facts(gql, member, works("bob smith", "Initech"))
    assert later["fact"]["subject"]["id"] == robert
    [record] = ok(gql(MERGES, member, id=bob))["entityMerges"]
    assert (record["factsMoved"], record["mentionsMoved"]) == (2, 1)

    # Undo the later write, then the merge: everything is as it was.
    neo4j_driver.execute_query(
        "MATCH ()-[f:FACT {id: $id}]->(o) DELETE f WITH o DETACH DELETE o",
        id=later["fact"]["id"],
    )
    restored = ok(gql(UNMERGE, member, id=record["id"]))["unmergeEntities"]
    assert [e["id"] for e in restored] == [robert, bob]
    after = snapshot(neo4j_driver, tenant_id)
    assert after == before
    again = gql(UNMERGE, member, id=record["id"])
    assert code_of(again) == "CONFLICT"


SUBJECT_FACTS = (
    "query($name: String!, $type: String!) { facts(scope: USER, subject: {type: $type,"
    " name: $name}) { items { id subject { id } } } }"
)
NAMED = "query($name: String!) { entities(scope: USER, name: $name) { items { id } } }"
GRAPH = "query($q: String!) { graphRecall(scope: USER, query: $q, hops: 0) { seeds { id } } }"


def test_merged_away_spellings_and_aliases_name_the_entity_on_read(gql: Gql, member: str) -> None:
    written = assert_facts(gql, member, works("Robert Smith", "Acme"), works("Bob Smith", "Globex"))
    robert, bob = (w["fact"]["subject"]["id"] for w in written)
    ok(gql(MERGE, member, keep=robert, merge=[bob]))
    ids = {w["fact"]["id"] for w in written}
    for name in ("Bob Smith", "bob smith!", "ROBERT  SMITH"):
        items = ok(gql(SUBJECT_FACTS, member, name=name, type="person"))["facts"]["items"]
        assert {f["id"] for f in items} == ids, name
        assert {f["subject"]["id"] for f in items} == {robert}
        assert ok(gql(NAMED, member, name=name))["entities"]["items"] == [{"id": robert}]
    seeds = ok(gql(GRAPH, member, q="Bob Smith"))["graphRecall"]["seeds"]
    assert {"id": robert} in seeds
    # A declared alias reads the same way; another type's name does not.
    ok(gql(ALIASES, member, id=robert, aliases=["Bob Smith", "Rob"]))
    items = ok(gql(SUBJECT_FACTS, member, name="rob", type="person"))["facts"]["items"]
    assert {f["id"] for f in items} == ids
    assert ok(gql(SUBJECT_FACTS, member, name="Rob", type="dog"))["facts"]["items"] == []


def test_bad_merges_are_refused_and_change_nothing(
    gql: Gql, member: str, token: Callable[..., str], neo4j_driver: Driver, tenant_id: str
) -> None:
    [a, b] = assert_facts(gql, member, works("Ann", "Acme"), works("Anne", "Acme"))
    ann, anne = a["fact"]["subject"]["id"], b["fact"]["subject"]["id"]
    acme = a["fact"]["object"]["id"]
    other = token(f"ent-{uuid.uuid4().hex[:8]}", "eve", "planner", memory_scopes=ALL)
    [foreign, foreign2] = assert_facts(gql, other, works("Anna", "Acme"), works("Anna B", "Acme"))
    foreign_id = foreign["fact"]["subject"]["id"]
    ok(gql(MERGE, other, keep=foreign_id, merge=[foreign2["fact"]["subject"]["id"]]))
    [foreign_merge] = ok(gql(MERGES, other, id=foreign_id))["entityMerges"]
    before = snapshot(neo4j_driver, tenant_id)
    cases = [
        ([ann], "INVALID_ARGUMENT"),  # itself
        ([acme], "INVALID_ARGUMENT"),  # another type
        ([anne, anne], "INVALID_ARGUMENT"),
        ([], "INVALID_ARGUMENT"),
        ([anne, foreign_id], "NOT_FOUND"),  # another tenant's, as a missing one
        ([anne, uuid.uuid4().hex], "NOT_FOUND"),
    ]
    for ids, code in cases:
        assert code_of(gql(MERGE, member, keep=ann, merge=ids)) == code, ids
    missing = gql(UNMERGE, member, id=uuid.uuid4().hex)
    theirs = gql(UNMERGE, member, id=foreign_merge["id"])
    assert code_of(missing) == code_of(theirs) == "NOT_FOUND"
    assert missing["errors"][0]["message"] == theirs["errors"][0]["message"]
    assert snapshot(neo4j_driver, tenant_id) == before


ERASE_SUBJECT = (
    "mutation($s: EntityInput!) { eraseSubject(scope: USER, subject: $s)"
    " { status removed { entities } } }"
)
LEFT_OF_MERGE = """
MATCH (n) WHERE n.tenant_id = $t AND (n:Entity OR n:MergedEntity OR n:EntityMerge)
RETURN labels(n)[0] AS label, n.name AS name ORDER BY label, name
"""


def _merged_pair(gql: Gql, who: str) -> str:
    robert, bob = (
        f["fact"]["subject"]["id"]
        for f in assert_facts(gql, who, works("Robert Smith", "Acme"), works("Bob Smith", "Acme"))
    )
    ok(gql(MERGE, who, keep=robert, merge=[bob]))
    return str(robert)


def test_erasing_a_merged_subject_takes_its_merged_spellings_and_records(
    gql: Gql, member: str, neo4j_driver: Driver, tenant_id: str
) -> None:
    _merged_pair(gql, member)
    subject = {"type": "person", "name": "Robert Smith"}
    receipt = ok(gql(ERASE_SUBJECT, member, s=subject))["eraseSubject"]
    assert receipt["status"] == "DONE"
    left, _, _ = neo4j_driver.execute_query(LEFT_OF_MERGE, t=tenant_id)
    assert [(r["label"], r["name"]) for r in left] == []
    assert receipt["removed"]["entities"] == 3  # Robert, the set-aside Bob, and Acme, orphaned


def test_erasing_a_person_leaves_no_merged_spelling_or_merge_record(
    gql: Gql, member: str, neo4j_driver: Driver, tenant_id: str
) -> None:
    _merged_pair(gql, member)
    assert ok(gql("mutation { eraseMe { status } }", member))["eraseMe"]["status"] == "DONE"
    left, _, _ = neo4j_driver.execute_query(LEFT_OF_MERGE, t=tenant_id)
    assert [(r["label"], r["name"]) for r in left] == []


IMPORT_DOC = (
    "mutation($m: String!) { importDocument(scope: USER, markdown: $m)"
    " { summary { id } chunks { id text } } }"
)
DELETE_DOC = (
    "mutation($id: ID!) { deleteDocument(scope: USER, id: $id) { chunksDeleted factsRemoved } }"
)


def test_a_kept_entity_whose_facts_all_go_stays_while_a_merge_points_at_it(
    gql: Gql, member: str
) -> None:
    """Facts that go with their last source take entities left with nothing, but not one a
    merge kept: the merge can still be undone onto it."""
    imported = ok(gql(IMPORT_DOC, member, m="# Notes\n\nBob Smith works at Acme.\n"))
    [chunk] = [c["id"] for c in imported["importDocument"]["chunks"] if "Bob" in c["text"]]
    source = {"chunkId": chunk, "start": 0, "end": 9}
    written = assert_facts(
        gql,
        member,
        works("Robert Smith", "Acme", source=source),
        works("Bob Smith", "Acme", source=source),
    )
    robert, bob = (w["fact"]["subject"]["id"] for w in written)
    ok(gql(MERGE, member, keep=robert, merge=[bob]))
    [record] = ok(gql(MERGES, member, id=bob))["entityMerges"]

    gone = ok(gql(DELETE_DOC, member, id=imported["importDocument"]["summary"]["id"]))[
        "deleteDocument"
    ]
    assert gone["factsRemoved"] >= 1
    restored = ok(gql(UNMERGE, member, id=record["id"]))["unmergeEntities"]
    assert sorted(e["id"] for e in restored) == sorted([robert, bob])
