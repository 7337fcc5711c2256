"""eraseSubject: one entity, the facts about it and its mention edges leave one scope; the
chunks that mention it stay."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from tests.integration import people
from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql
from tests.integration.people import fact, span
from tests.integration.test_erasure import ERASURES, RECEIPT

ERASE = (
    "mutation($scope: Scope!, $s: EntityInput!) { eraseSubject(scope: $scope, subject: $s) { "
    + RECEIPT
    + " } }"
)
DOCUMENT = "query($id: ID!) { document(scope: USER, id: $id) { markdown } }"
FACTS = "{ facts(scope: USER, includeRetired: true) { items { text } } }"
LEFT = """
MATCH (e:Entity {scope_key: $key}) WHERE e.normalized_name CONTAINS $name
RETURN count(e) + COUNT { MATCH (:Chunk {scope_key: $key})-[:MENTIONS]->(x:Entity)
                          WHERE x.normalized_name CONTAINS $name } AS n
"""
MENTIONS = "MATCH (:Chunk {scope_key: $key})-[m:MENTIONS]->() RETURN count(m) AS n"


@pytest.fixture
def setting(gql: Gql, token: Callable[..., str]) -> dict[str, Any]:
    tenant, admin = people.new_org(gql, token, "subject")
    user = f"u-{uuid.uuid4().hex[:8]}"
    who = token(tenant, user, "planner", memory_scopes=people.ALL, sql_scopes=people.ALL)
    doc = ok(gql(people.IMPORT, who, m="# Carol\n\nCarol knows Dave well.\n"))["importDocument"]
    chunk = doc["chunks"][1]["id"]
    carol = {"type": "person", "name": "Carol"}
    dave = {"type": "person", "name": "Dave"}
    people.assert_facts(
        gql,
        who,
        Scope.USER,
        False,
        [
            {**fact(carol, "knows", "Dave"), "object": dave, "objectValue": None},
            {**fact(carol, "lives in", "Cluj"), "source": span(chunk, 0, 5)},
            {**fact(dave, "admires", "x"), "object": carol, "objectValue": None},
            {**fact(dave, "plays", "chess"), "source": span(chunk, 16, 20)},
        ],
    )
    key = scope_key(tenant, Scope.USER, user)
    return {"who": who, "admin": admin, "doc": doc, "key": key, "tenant": tenant}


def test_the_subject_its_facts_and_mentions_go_and_the_chunks_stay(
    gql: Gql, setting: dict[str, Any], neo4j_driver: Driver
) -> None:
    who, key = setting["who"], setting["key"]
    before = ok(gql(DOCUMENT, who, id=setting["doc"]["summary"]["id"]))["document"]
    assert people.count(neo4j_driver, LEFT, key=key, name="carol") > 1
    mentions_before = people.count(neo4j_driver, MENTIONS, key=key)

    receipt = ok(gql(ERASE, who, scope="USER", s={"type": "Person", "name": " carol "}))
    receipt = receipt["eraseSubject"]
    assert (receipt["kind"], receipt["scope"], receipt["status"]) == ("SUBJECT", "USER", "DONE")
    removed = receipt["removed"]
    # Three facts touch Carol; one had a source. Carol and the orphaned value "Cluj" go.
    assert (removed["facts"], removed["factSources"], removed["entities"]) == (3, 1, 2)
    assert removed["chunks"] == removed["documents"] == 0
    assert people.count(neo4j_driver, LEFT, key=key, name="carol") == 0
    assert people.count(neo4j_driver, LEFT, key=key, name="cluj") == 0
    assert people.count(neo4j_driver, MENTIONS, key=key) == mentions_before - 1
    assert [f["text"] for f in ok(gql(FACTS, who))["facts"]["items"]] == ["Dave plays chess"]
    after = ok(gql(DOCUMENT, who, id=setting["doc"]["summary"]["id"]))["document"]
    assert after == before
    audit = ok(gql(ERASURES, setting["admin"]))["erasures"]["items"]
    assert [r["id"] for r in audit] == [receipt["id"]]


def test_an_unknown_subject_is_not_found_and_leaves_no_record(
    gql: Gql, setting: dict[str, Any]
) -> None:
    body = gql(ERASE, setting["who"], scope="USER", s={"type": "person", "name": "Nobody"})
    assert code_of(body) == "NOT_FOUND"
    assert code_of(gql(ERASE, setting["who"], scope="USER", s={"type": " ", "name": "x"})) == (
        "INVALID_ARGUMENT"
    )
    assert ok(gql(ERASURES, setting["admin"]))["erasures"]["items"] == []


def test_shared_scopes_need_the_admin_role(
    gql: Gql, setting: dict[str, Any], neo4j_driver: Driver
) -> None:
    who, admin = setting["who"], setting["admin"]
    service = {"type": "service", "name": "ledger"}
    people.assert_facts(gql, who, Scope.TENANT, False, [fact(service, "runs on", "rails")])
    tenant_key = scope_key(setting["tenant"], Scope.TENANT, setting["tenant"])
    assert code_of(gql(ERASE, who, scope="TENANT", s=service)) == "FORBIDDEN"
    assert people.count(neo4j_driver, LEFT, key=tenant_key, name="ledger") == 1
    receipt = ok(gql(ERASE, admin, scope="TENANT", s=service))["eraseSubject"]
    assert receipt["removed"]["facts"] == 1
    assert people.count(neo4j_driver, LEFT, key=tenant_key, name="ledger") == 0
