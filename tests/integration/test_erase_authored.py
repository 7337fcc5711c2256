"""Erasing a person finds what they wrote in shared scopes: deleted or anonymised by policy.

Checked over the whole database (every string property of every node and relationship of
the tenant, and every writer key), not through the API alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from tests.integration import people
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.people import ALL, count

PLANES = "entries noteVersions documents chunks chunkRevisions documentRevisions entities facts"
ERASE_USER = (
    "mutation($u: ID!) { eraseUser(userId: $u) { status matched authored { policy "
    f"deleted {{ {PLANES} }} anonymised {{ {PLANES} }} unattributed }} }} }}"
)
SET_POLICY = """mutation($a: AuthoredPolicy!) { setErasurePolicy(authored: $a) {
  authored updatedAt } }"""
POLICY = "query { erasurePolicy { authored updatedAt } }"
SET = """mutation($k: String!, $v: JSON!, $scope: Scope!) {
  memorySet(scope: $scope, key: $k, value: $v) { key } }"""
GET = """query($scope: Scope!, $key: String!) { memory(scope: $scope, key: $key) {
  value provenance { writer agent } } }"""
IMPORT = """mutation($m: String!, $scope: Scope!) { importDocument(scope: $scope, markdown: $m) {
  summary { id } } }"""
ROWS_OF_WRITER = """
CALL () { MATCH (n) WHERE n.writer_key = $key RETURN count(n) AS c
  UNION ALL MATCH ()-[r]->() WHERE r.writer_key = $key RETURN count(r) AS c }
RETURN sum(c) AS n
"""
CHUNKS_OF = """MATCH (c:Chunk {scope_key: $k, writer_key: $w}) WHERE c.index IS NOT NULL
RETURN count(c)"""
TENANT_ROWS_WITH = "MATCH (n {scope_key: $k}) WHERE n.text CONTAINS $w RETURN count(n)"


ASSERT = """mutation($facts: [FactInput!]!) { assertFacts(scope: TENANT, facts: $facts,
  place: false) { fact { subject { id } } } }"""
MERGE = """mutation($keep: ID!, $merge: [ID!]!) { mergeEntities(scope: TENANT, keepId: $keep,
  mergeIds: $merge) { id aliases } }"""
MERGES = """query($id: ID!) { entityMerges(scope: TENANT, entityId: $id) { id mergedIds
  addedAliases } }"""
UNMERGE = "mutation($id: ID!) { unmergeEntities(scope: TENANT, mergeId: $id) { id name } }"


def entity(gql: Gql, who: str, name: str) -> str:
    """A TENANT fact about ``name`` (a person) written by ``who``; the entity's id."""
    fact = {"subject": {"type": "person", "name": name}, "predicate": "likes", "objectValue": "tea"}
    [made] = ok(gql(ASSERT, who, facts=[fact]))["assertFacts"]
    subject_id: str = made["fact"]["subject"]["id"]
    return subject_id


def merged_into(gql: Gql, who: str, keep: str, merge: list[str]) -> dict[str, Any]:
    kept: dict[str, Any] = ok(gql(MERGE, who, keep=keep, merge=merge))["mergeEntities"]
    return kept


def write_shared(gql: Gql, who: str, word: str) -> None:
    """A note in TENANT and in AGENT, and a TENANT document, all containing ``word``."""
    ok(gql(SET, who, k=f"team/{word}", v=f"{word} owns the release", scope="TENANT"))
    ok(gql(SET, who, k=f"agent/{word}", v=f"{word} was here", scope="AGENT"))
    doc = f"# {word} runbook\n\nStep one for {word}.\n\n## More\n\nStep two for {word}.\n"
    ok(gql(IMPORT, who, m=doc, scope="TENANT"))


@pytest.fixture
def team(gql: Gql, token: Callable[..., str]) -> dict[str, Any]:
    tenant, admin = people.new_org(gql, token, "authored")
    marker = f"zq{uuid.uuid4().hex[:10]}9"
    alice = f"alice-{marker}"  # the user id carries the marker: a scan finds any trace of it
    bob_word = f"zb{uuid.uuid4().hex[:10]}9"
    return {
        "tenant": tenant,
        "admin": admin,
        "marker": marker,
        "alice": alice,
        "alice_token": token(tenant, alice, "planner", memory_scopes=ALL),
        "bob": f"bob-{bob_word}",
        "bob_word": bob_word,
        "bob_token": token(tenant, f"bob-{bob_word}", "planner", memory_scopes=ALL),
    }


def scan(driver: Driver, t: dict[str, Any], word: str) -> int:
    return count(driver, people.ROWS_WITH_MARKER, m=word, tenant=t["tenant"])


def test_delete_policy_removes_what_the_person_wrote_in_shared_scopes(
    gql: Gql, team: dict[str, Any], neo4j_driver: Driver
) -> None:
    t = team
    write_shared(gql, t["alice_token"], t["marker"])
    write_shared(gql, t["bob_token"], t["bob_word"])
    # Written stamps who wrote it, shown to a colleague of the same tenant.
    seen = ok(gql(GET, t["bob_token"], scope="TENANT", key=f"team/{t['marker']}"))
    assert seen["memory"]["provenance"] == {"writer": t["alice"], "agent": "planner"}
    assert ok(gql(POLICY, t["admin"]))["erasurePolicy"] == {"authored": "DELETE", "updatedAt": None}
    alice_key = scope_key(t["tenant"], Scope.USER, t["alice"])
    assert count(neo4j_driver, ROWS_OF_WRITER, key=alice_key) > 0
    assert scan(neo4j_driver, t, t["marker"]) > 0
    tenant_key = scope_key(t["tenant"], Scope.TENANT, t["tenant"])
    chunks = count(neo4j_driver, CHUNKS_OF, k=tenant_key, w=alice_key)
    assert chunks >= 2

    receipt = ok(gql(ERASE_USER, t["admin"], u=t["alice"]))["eraseUser"]

    assert receipt["status"] == "DONE"
    assert receipt["matched"]
    authored = receipt["authored"]
    assert authored["policy"] == "DELETE"
    deleted = authored["deleted"]
    assert deleted["entries"] == 2  # the TENANT note and the AGENT note
    assert deleted["documents"] == 1
    assert deleted["chunks"] == chunks  # every section of her document (not its root)
    assert deleted["documentRevisions"] == 1
    assert authored["anonymised"]["entries"] == 0
    assert authored["unattributed"] == 0
    # Nothing of Alice anywhere: no writer key, no row naming her id or holding her words.
    assert count(neo4j_driver, ROWS_OF_WRITER, key=alice_key) == 0
    assert scan(neo4j_driver, t, t["marker"]) == 0
    # Bob's rows are untouched and still his.
    mine = ok(gql(GET, t["bob_token"], scope="TENANT", key=f"team/{t['bob_word']}"))
    assert mine["memory"]["provenance"]["writer"] == t["bob"]
    assert count(neo4j_driver, TENANT_ROWS_WITH, k=tenant_key, w=t["bob_word"]) >= 3


def test_erasure_takes_the_persons_merges(
    gql: Gql, team: dict[str, Any], neo4j_driver: Driver
) -> None:
    """Finding 5 of issue 46: the entities of hers a colleague merged away kept her user id,
    session, run and names, and the merge record gave her spelling to anyone reading
    ``entityMerges``; a merge she made kept her id."""
    t = team
    hers = entity(gql, t["alice_token"], f"Ada {t['marker']}")
    bobs = entity(gql, t["bob_token"], f"Ada Lovelace {t['bob_word']}")
    also = entity(gql, t["bob_token"], f"A. Lovelace {t['bob_word']}")
    kept = merged_into(gql, t["bob_token"], bobs, [hers, also])
    assert f"Ada {t['marker']}" in kept["aliases"]
    [record] = ok(gql(MERGES, t["bob_token"], id=bobs))["entityMerges"]
    assert f"Ada {t['marker']}" in record["addedAliases"]
    # A merge she made of two of Bob's entities.
    left = entity(gql, t["bob_token"], f"Grace {t['bob_word']}")
    right = entity(gql, t["bob_token"], f"G. Hopper {t['bob_word']}")
    merged_into(gql, t["alice_token"], left, [right])
    alice_key = scope_key(t["tenant"], Scope.USER, t["alice"])
    assert scan(neo4j_driver, t, t["marker"]) > 0

    receipt = ok(gql(ERASE_USER, t["admin"], u=t["alice"]))["eraseUser"]

    assert receipt["status"] == "DONE"
    assert receipt["authored"]["deleted"]["entities"] >= 1  # her set-aside entity
    # Nothing of her anywhere: her entity, her spelling (record, aliases), her id on the merge.
    assert count(neo4j_driver, ROWS_OF_WRITER, key=alice_key) == 0
    assert scan(neo4j_driver, t, t["marker"]) == 0
    [record] = ok(gql(MERGES, t["bob_token"], id=bobs))["entityMerges"]
    assert record["mergedIds"] == [also]
    assert record["addedAliases"] == [f"A. Lovelace {t['bob_word']}"]
    # Bob can still undo his merge (his entity comes back), and the one she made.
    restored = ok(gql(UNMERGE, t["bob_token"], id=record["id"]))["unmergeEntities"]
    assert [e["id"] for e in restored] == [bobs, also]
    [hers_made] = ok(gql(MERGES, t["bob_token"], id=left))["entityMerges"]
    assert ok(gql(UNMERGE, t["bob_token"], id=hers_made["id"]))["unmergeEntities"]


def test_her_set_aside_entity_others_were_merged_into_stays_so_both_merges_undo(
    gql: Gql, team: dict[str, Any], neo4j_driver: Driver
) -> None:
    """Bob merged one of his entities into hers, then hers into another of his. Deleting
    her set-aside entity left his first one pointing at nothing: never to be unmerged. It
    stays, anonymised, with the name Bob's entity brought it."""
    t = team
    name = f"zk{uuid.uuid4().hex[:10]}9"  # her entity's name, which stays with it
    hers = entity(gql, t["alice_token"], f"Ada {name}")
    his = entity(gql, t["bob_token"], f"A. L. {t['bob_word']}")
    merged_into(gql, t["bob_token"], hers, [his])
    outer = entity(gql, t["bob_token"], f"Ada Lovelace {t['bob_word']}")
    merged_into(gql, t["bob_token"], outer, [hers])

    receipt = ok(gql(ERASE_USER, t["admin"], u=t["alice"]))["eraseUser"]

    assert receipt["status"] == "DONE"
    assert receipt["authored"]["anonymised"]["entities"] >= 1
    alice_key = scope_key(t["tenant"], Scope.USER, t["alice"])
    assert count(neo4j_driver, ROWS_OF_WRITER, key=alice_key) == 0
    assert scan(neo4j_driver, t, t["marker"]) == 0
    [record] = ok(gql(MERGES, t["bob_token"], id=outer))["entityMerges"]
    assert record["mergedIds"] == [hers]
    back = ok(gql(UNMERGE, t["bob_token"], id=record["id"]))["unmergeEntities"]
    assert [e["id"] for e in back] == [outer, hers]
    [first] = ok(gql(MERGES, t["bob_token"], id=his))["entityMerges"]
    back = ok(gql(UNMERGE, t["bob_token"], id=first["id"]))["unmergeEntities"]
    assert [e["id"] for e in back] == [hers, his]


DROP_FACTS_OF = "MATCH (:Entity {id: $id})-[f:FACT]-() DELETE f"


def test_her_fact_less_entity_others_were_merged_into_stays(
    gql: Gql, team: dict[str, Any], neo4j_driver: Driver
) -> None:
    """Her entity with no fact left, which one of Bob's was merged into: deleting it left
    his set aside for good. It stays, anonymised, and Bob's merge still undoes."""
    t = team
    name = f"zk{uuid.uuid4().hex[:10]}9"
    hers = entity(gql, t["alice_token"], f"Grace {name}")
    his = entity(gql, t["bob_token"], f"G. Hopper {t['bob_word']}")
    merged_into(gql, t["bob_token"], hers, [his])
    # No fact names it any more (its facts gone without the orphan sweep of a fact delete).
    neo4j_driver.execute_query(DROP_FACTS_OF, id=hers)

    receipt = ok(gql(ERASE_USER, t["admin"], u=t["alice"]))["eraseUser"]

    assert receipt["status"] == "DONE"
    alice_key = scope_key(t["tenant"], Scope.USER, t["alice"])
    assert count(neo4j_driver, ROWS_OF_WRITER, key=alice_key) == 0
    assert scan(neo4j_driver, t, t["marker"]) == 0
    [record] = ok(gql(MERGES, t["bob_token"], id=his))["entityMerges"]
    back = ok(gql(UNMERGE, t["bob_token"], id=record["id"]))["unmergeEntities"]
    assert [e["id"] for e in back] == [hers, his]


def test_anonymise_policy_keeps_her_merged_entities_and_merges_without_her(
    gql: Gql, team: dict[str, Any], neo4j_driver: Driver
) -> None:
    t = team
    kept = f"zk{uuid.uuid4().hex[:10]}9"  # her entity's name, which stays
    hers = entity(gql, t["alice_token"], f"Ada {kept}")
    bobs = entity(gql, t["bob_token"], f"Ada Lovelace {t['bob_word']}")
    merged_into(gql, t["bob_token"], bobs, [hers])
    left = entity(gql, t["bob_token"], f"Grace {t['bob_word']}")
    merged_into(gql, t["alice_token"], left, [entity(gql, t["bob_token"], f"G. {t['bob_word']}")])
    ok(gql(SET_POLICY, t["admin"], a="ANONYMISE"))

    receipt = ok(gql(ERASE_USER, t["admin"], u=t["alice"]))["eraseUser"]

    assert receipt["authored"]["anonymised"]["entities"] >= 1  # her set-aside entity
    alice_key = scope_key(t["tenant"], Scope.USER, t["alice"])
    assert count(neo4j_driver, ROWS_OF_WRITER, key=alice_key) == 0
    assert scan(neo4j_driver, t, t["marker"]) == 0  # her id left the entity and the merge
    [record] = ok(gql(MERGES, t["bob_token"], id=bobs))["entityMerges"]
    assert record["addedAliases"] == [f"Ada {kept}"]  # the rows stay, names and all
    assert [
        e["id"] for e in ok(gql(UNMERGE, t["bob_token"], id=record["id"]))["unmergeEntities"]
    ] == [bobs, hers]


def test_anonymise_policy_keeps_the_rows_without_the_writer(
    gql: Gql, team: dict[str, Any], neo4j_driver: Driver
) -> None:
    t = team
    kept = f"zk{uuid.uuid4().hex[:10]}9"  # the text, which stays; the marker is her identity
    write_shared(gql, t["alice_token"], kept)
    write_shared(gql, t["bob_token"], t["bob_word"])
    assert scan(neo4j_driver, t, t["marker"]) > 0  # her user id, on every row she wrote
    set_to = ok(gql(SET_POLICY, t["admin"], a="ANONYMISE"))["setErasurePolicy"]
    assert set_to["authored"] == "ANONYMISE"
    assert set_to["updatedAt"]

    receipt = ok(gql(ERASE_USER, t["admin"], u=t["alice"]))["eraseUser"]

    authored = receipt["authored"]
    assert authored["policy"] == "ANONYMISE"
    assert authored["anonymised"]["entries"] == 2
    assert authored["anonymised"]["documents"] == 1
    assert authored["anonymised"]["chunks"] >= 2  # with the document's root
    assert authored["anonymised"]["documentRevisions"] == 1
    assert authored["deleted"]["entries"] == 0
    alice_key = scope_key(t["tenant"], Scope.USER, t["alice"])
    assert count(neo4j_driver, ROWS_OF_WRITER, key=alice_key) == 0
    assert scan(neo4j_driver, t, t["marker"]) == 0  # no identity left
    assert scan(neo4j_driver, t, kept) >= 3  # the rows themselves stay
    left = ok(gql(GET, t["bob_token"], scope="TENANT", key=f"team/{kept}"))["memory"]
    assert left["value"] == f"{kept} owns the release"
    assert left["provenance"]["writer"] is None
    mine = ok(gql(GET, t["bob_token"], scope="TENANT", key=f"team/{t['bob_word']}"))
    assert mine["memory"]["provenance"]["writer"] == t["bob"]


def test_rows_written_before_authorship_are_counted_unattributed(
    gql: Gql, team: dict[str, Any], neo4j_driver: Driver
) -> None:
    t = team
    write_shared(gql, t["alice_token"], t["marker"])
    tenant_key = scope_key(t["tenant"], Scope.TENANT, t["tenant"])
    # A note as an older server wrote it: no writer stamped.
    neo4j_driver.execute_query(
        "CREATE (:Memory {scope_key: $k, tenant_id: $t, scope: 'tenant', owner_id: $t, "
        "key: 'legacy', value: '\"old\"', created_at: datetime(), updated_at: datetime()})",
        k=tenant_key,
        t=t["tenant"],
    )
    receipt = ok(gql(ERASE_USER, t["admin"], u=t["alice"]))["eraseUser"]
    assert receipt["authored"]["unattributed"] == 1
    assert (
        count(
            neo4j_driver,
            "MATCH (m:Memory {scope_key: $k, key: 'legacy'}) RETURN count(m)",
            k=tenant_key,
        )
        == 1
    )


def test_the_policy_is_for_tenant_admins_and_refuses_unknown_values(
    gql: Gql, team: dict[str, Any]
) -> None:
    t = team
    refused = gql(SET_POLICY, t["bob_token"], a="ANONYMISE")
    assert refused["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert gql(SET_POLICY, t["admin"], a="KEEP")["errors"]
    assert ok(gql(POLICY, t["admin"]))["erasurePolicy"]["authored"] == "DELETE"
