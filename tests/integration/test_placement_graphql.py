"""Ontology placement through GraphQL: fail closed, one transaction, no edge across scopes."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.identity import Scope
from tests.integration.answers import ok
from tests.integration.conftest import Gql

ONTOLOGY = """# Tenant ontology
status: {status}

## service
scope: tenant

## internal-service
extends: service

## person
scope: user

## location
"""
SET_ONTOLOGY = "mutation($m: String!) { setOntology(markdown: $m) { status } }"
PLACEMENT = """query($items: [PlacementItemInput!]!) { placement(scope: USER, items: $items)
  { scope moved reason message advisory } }"""
ASSERT = """mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts)
  { created fact { id scope provenance { sourceQuote { chunkId text } } }
    placement { scope moved reason } } }"""
ALL = [Scope.AGENT, Scope.USER, Scope.TENANT]


@pytest.fixture
def org(token: Callable[..., str], gql: Gql) -> dict[str, Any]:
    """A tenant of its own with a confirmed ontology, an admin and a fully granted member."""
    tenant = f"org-{uuid.uuid4().hex[:8]}"
    admin = token(tenant, "root", None, admin=True)
    ok(gql(SET_ONTOLOGY, admin, m=ONTOLOGY.format(status="confirmed")))

    def member(user: str, **kw: Any) -> str:
        kw.setdefault("memory_scopes", ALL)
        kw.setdefault("sql_scopes", ALL)
        return token(tenant, user, "planner", **kw)

    return {"tenant": tenant, "admin": admin, "member": member}


def service_fact(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "subject": {"type": "service", "name": name},
        "predicate": "runs on",
        "objectValue": "kubernetes",
        **extra,
    }


def test_dry_run_decides_each_item_and_writes_nothing(gql: Gql, org: dict[str, Any]) -> None:
    alice = org["member"]("alice")
    items = [
        {"entityType": "service", "subject": "checkout-api"},
        {"entityType": "internal-service", "subject": "ledger"},
        {"entityType": "person", "subject": "Bob"},
        {"entityType": "location", "subject": "Cluj-Napoca office"},
        {"entityType": "spaceship", "subject": "Enterprise"},
        {"entityType": "service", "subject": "me"},
        {"entityType": None, "subject": "checkout-api"},
    ]
    decided = ok(gql(PLACEMENT, alice, items=items))["placement"]
    assert [(d["scope"], d["moved"]) for d in decided] == [
        ("TENANT", True),
        ("TENANT", True),
        ("USER", False),
        ("USER", False),
        ("USER", False),
        ("USER", False),
        ("USER", False),
    ]
    assert all(d["reason"] and d["message"] for d in decided)
    facts = "{ facts(scope: TENANT, includeRetired: true) { items { id } } }"
    assert ok(gql(facts, alice))["facts"]["items"] == []


def test_placed_batch_lands_in_the_placed_scope(gql: Gql, org: dict[str, Any]) -> None:
    alice, bob = org["member"]("alice"), org["member"]("bob")
    written = ok(
        gql(
            ASSERT,
            alice,
            facts=[
                service_fact("checkout-api"),
                {
                    "subject": {"type": "person", "name": "Carol"},
                    "predicate": "prefers",
                    "objectValue": "tea",
                },
            ],
        )
    )["assertFacts"]
    assert [(w["fact"]["scope"], w["placement"]["moved"]) for w in written] == [
        ("TENANT", True),
        ("USER", False),
    ]
    # The tenant fact is shared with bob; alice's person fact is not.
    bob_sees = ok(gql("{ facts(scope: TENANT) { items { text } } }", bob))["facts"]["items"]
    assert [f["text"] for f in bob_sees] == ["checkout-api runs on kubernetes"]
    assert ok(gql("{ facts(scope: USER) { items { text } } }", bob))["facts"]["items"] == []


def test_draft_or_missing_ontology_moves_nothing(
    gql: Gql, org: dict[str, Any], token: Callable[..., str]
) -> None:
    ok(gql(SET_ONTOLOGY, org["admin"], m=ONTOLOGY.format(status="draft")))
    alice = org["member"]("alice")
    [d] = ok(gql(PLACEMENT, alice, items=[{"entityType": "service", "subject": "x"}]))["placement"]
    assert (d["scope"], d["moved"], d["reason"]) == ("USER", False, "DRAFT_ONTOLOGY")
    stranger = token(f"none-{uuid.uuid4().hex[:6]}", "u", "a")
    [d] = ok(gql(PLACEMENT, stranger, items=[{"entityType": "service", "subject": "x"}]))[
        "placement"
    ]
    assert d["reason"] == "NO_ONTOLOGY"


def test_grants_and_isolation_keep_facts_home(gql: Gql, org: dict[str, Any]) -> None:
    item = [{"entityType": "service", "subject": "checkout-api"}]
    isolated = org["member"]("iso", isolated=True)
    no_sql = org["member"]("nosql", sql_scopes=[Scope.USER])
    narrow = org["member"]("narrow", memory_scopes=[Scope.AGENT, Scope.USER])
    for who, reason in (
        (isolated, "ISOLATED"),
        (no_sql, "SCOPE_NOT_GRANTED"),
        (narrow, "NO_TENANT_ACCESS"),
    ):
        [d] = ok(gql(PLACEMENT, who, items=item))["placement"]
        assert (d["scope"], d["moved"], d["reason"]) == ("USER", False, reason)
    [d] = ok(gql(PLACEMENT, no_sql, items=item))["placement"]
    assert "sql_scopes" in d["message"]
    # The ontology lives in the tenant scope: an isolated member reads only what shapes its
    # own writes: none of this ontology's types declares a single-valued predicate, so it
    # reads as none, not telling that one exists.
    read = ok(gql("{ ontology { markdown singleValued { entityType } } }", isolated))
    assert read["ontology"] is None


DRY_RUN = """query($scope: Scope!, $items: [PlacementItemInput!]!) {
  placement(scope: $scope, items: $items) { scope moved reason message advisory entityType } }"""
PLACED = """mutation($scope: Scope!, $facts: [FactInput!]!) { assertFacts(scope: $scope,
  facts: $facts) { fact { scope }
  placement { scope moved reason message advisory entityType } } }"""


def test_without_tenant_access_answers_tell_nothing_of_the_ontology(
    gql: Gql, org: dict[str, Any], token: Callable[..., str]
) -> None:
    """Finding 7: type names, aliases and declared scopes reached isolated members and tokens
    granted only USER. Their answers now say only that each fact stays."""
    kinds = ["service", "internal-service", "person", "location", "spaceship", None]
    items = [{"entityType": k, "subject": "checkout-api"} for k in kinds]
    facts = [
        {"subject": {"type": k or "thing", "name": "Bob"}, "predicate": "is", "objectValue": "x"}
        for k in kinds
    ]
    callers = {
        "ISOLATED": org["member"]("iso", isolated=True),
        "NO_TENANT_ACCESS": org["member"]("only-user", memory_scopes=[Scope.USER]),
    }
    narrow = org["member"]("narrow", memory_scopes=[Scope.AGENT, Scope.USER])
    for reason, who in callers.items():
        why = (
            "the caller is isolated from the tenant, so the tenant ontology does not apply"
            if reason == "ISOLATED"
            else "placement follows the tenant ontology, which needs TENANT in this token's "
            "memory_scopes"
        )
        generic = {
            "scope": "USER",
            "moved": False,
            "reason": reason,
            "message": f"{why}; it stays in USER",
            "advisory": None,
            "entityType": None,
        }
        decided = ok(gql(DRY_RUN, who, scope="USER", items=items))["placement"]
        assert decided == [generic] * len(items), reason
        written = ok(gql(PLACED, who, scope="USER", facts=facts))["assertFacts"]
        assert [w["placement"] for w in written] == [generic] * len(facts)
        assert {w["fact"]["scope"] for w in written} == {"USER"}
    # A person fact asked for AGENT would have moved to USER: it stays, and says nothing more.
    [d] = ok(gql(DRY_RUN, narrow, scope="AGENT", items=items[2:3]))["placement"]
    assert (d["scope"], d["moved"], d["reason"], d["entityType"]) == (
        "AGENT",
        False,
        "NO_TENANT_ACCESS",
        None,
    )
    # a member with TENANT still gets the full decision
    [d] = ok(gql(DRY_RUN, org["member"]("alice"), scope="USER", items=items[1:2]))["placement"]
    assert (d["scope"], d["reason"], d["entityType"]) == ("TENANT", "PLACED", "internal-service")


def test_only_admins_set_the_ontology_and_bad_ones_change_nothing(
    gql: Gql, org: dict[str, Any]
) -> None:
    alice = org["member"]("alice")
    refused = gql(SET_ONTOLOGY, alice, m=ONTOLOGY.format(status="draft"))
    assert refused["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    bad = gql(SET_ONTOLOGY, org["admin"], m="status: confirmed\n\n## x\nscope: galaxy\n")
    assert bad["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert ok(gql("{ ontology { status } }", alice))["ontology"] == {"status": "CONFIRMED"}


def test_batch_limits(gql: Gql, org: dict[str, Any]) -> None:
    alice = org["member"]("alice")
    for items in ([], [{"entityType": "service", "subject": "s"}] * 201):
        body = gql(PLACEMENT, alice, items=items)
        assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"


def test_moved_fact_keeps_its_quote_but_no_edge_crosses_scopes(
    gql: Gql, org: dict[str, Any], neo4j_driver: Any
) -> None:
    alice = org["member"]("alice")
    doc = ok(
        gql(
            """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
             chunks { id type text } } }""",
            alice,
            m="# Notes\n\nThe checkout-api runs on kubernetes since May.\n",
        )
    )["importDocument"]
    para = next(c for c in doc["chunks"] if c["type"] == "PARAGRAPH")
    source = {"chunkId": para["id"], "start": 4, "end": 16}
    written = ok(
        gql(
            ASSERT,
            alice,
            facts=[
                service_fact("checkout-api", source=source),
                {
                    "subject": {"type": "person", "name": "Dana"},
                    "predicate": "mentioned",
                    "objectValue": "checkout",
                    "source": source,
                },
            ],
        )
    )["assertFacts"]
    moved, stayed = written
    assert moved["fact"]["scope"] == "TENANT"
    assert moved["fact"]["provenance"]["sourceQuote"] == {
        "chunkId": para["id"],
        "text": "checkout-api",
    }
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (c:Chunk {id: $id})-[m:MENTIONS]->(e:Entity) RETURN e.name AS name, "
        "e.scope AS scope ORDER BY name",
        id=para["id"],
    )
    assert [(r["name"], r["scope"]) for r in records] == [("Dana", "USER")]
    assert stayed["fact"]["scope"] == "USER"


READ = """{ ontology { markdown status updatedBy updatedAt
  singleValued { entityType predicate spellings typeSpellings } } }"""
CLOSING = """mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts, place: false)
  { closed { reason } fact { validAt } } }"""
CLOSES = """# Tenant ontology
status: {status}

## person
scope: user
aliases: human
single: lives in
same: lives in = resides in

## vault-{canary}
scope: tenant
aliases: strongroom-{canary}
"""


def lives(gql: Gql, who: str, city: str, year: str, kind: str = "human") -> list[str]:
    """A USER fact that ``who`` lives in ``city`` from ``year``: the closures it made."""
    fact = {
        "subject": {"type": kind, "name": "Alice"},
        "predicate": "resides in",
        "object": {"type": "city", "name": city},
        "validAt": year,
    }
    [written] = ok(gql(CLOSING, who, facts=[fact]))["assertFacts"]
    return [c["reason"] for c in written["closed"]]


def test_a_writer_refused_the_ontology_reads_what_shapes_its_writes_and_nothing_else(
    gql: Gql, org: dict[str, Any], token: Callable[..., str]
) -> None:
    """Finding 4 of issue 46: isolated members and tokens without TENANT got FORBIDDEN on
    `ontology`, yet their own USER writes told which predicates were single-valued (through
    `closed` and the stored `validAt`) and which spellings were the same. The rule: they read
    the single-valued declarations in force, with every spelling that brings them into play,
    and nothing else of the ontology; a declaration not in force neither shows nor closes."""
    canary = uuid.uuid4().hex
    ok(gql(SET_ONTOLOGY, org["admin"], m=CLOSES.format(status="confirmed", canary=canary)))
    declared = {
        "entityType": "person",
        "predicate": "lives in",
        "spellings": ["lives in", "resides in"],
        "typeSpellings": ["person", "human"],
    }
    full = ok(gql(READ, org["member"]("tenant-reader")))["ontology"]
    assert canary in full["markdown"]
    assert full["singleValued"] == [declared]
    refused_tenant = {
        "isolated": org["member"]("iso-closes", isolated=True),
        "user only": org["member"]("user-closes", memory_scopes=[Scope.USER]),
    }
    for why, who in refused_tenant.items():
        body = gql(READ, who)
        assert body["data"]["ontology"] == {
            "markdown": None,
            "status": "CONFIRMED",
            "updatedBy": None,
            "updatedAt": None,
            "singleValued": [declared],
        }, why
        assert canary not in str(body), why  # no other type, alias or placement
        # What it reads is what its writes show: the alias and the same-as spelling close.
        assert lives(gql, who, "Lisbon", "2020") == [], why
        assert lives(gql, who, "Porto", "2023") == ["SINGLE_VALUED"], why

    # Not in force (a draft): nothing to read, not even that a draft exists, and nothing closes.
    ok(gql(SET_ONTOLOGY, org["admin"], m=CLOSES.format(status="draft", canary=canary)))
    who = org["member"]("iso-draft", isolated=True)
    assert ok(gql(READ, who))["ontology"] is None
    assert lives(gql, who, "Lisbon", "2020") == []
    assert lives(gql, who, "Porto", "2023") == []
    # A token that writes facts nowhere reads none of it.
    nowhere = token(org["tenant"], None, None, memory_scopes=[Scope.USER])
    assert gql(READ, nowhere)["errors"][0]["extensions"]["code"] == "FORBIDDEN"
