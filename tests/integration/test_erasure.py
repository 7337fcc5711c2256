"""Erasure of a person across every plane, checked over the whole database and the disk."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.resolvers.services import Services
from tests.integration import cycle, people
from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql
from tests.integration.people import Person, by_label, count

COUNTS = "entries documents chunks entities facts factSources sqlDatabases sqlBytes spans"
RECEIPT = f"""id kind scope status requestedBy requestedAt finishedAt attempts matched
  removed {{ {COUNTS} }}"""
ERASE_USER = "mutation($u: ID!) { eraseUser(userId: $u) { " + RECEIPT + " } }"
ERASE_ME = "mutation { eraseMe { " + RECEIPT + " } }"
ERASURES = "query($after: String) { erasures(limit: 2, after: $after) { items { " + RECEIPT
ERASURES += " } cursor hasMore } }"
SEARCH = """query($q: String!, $scope: Scope!) { search(scope: $scope, query: $q, topK: 50) {
  hits { id text } } }"""
FACT = "query($id: ID!) { fact(scope: TENANT, id: $id) { sources { chunkId text } } }"


@pytest.fixture
def org(gql: Gql, token: Callable[..., str], neo4j_driver: Driver) -> dict[str, Any]:
    tenant, admin = people.new_org(gql, token, "erase")
    alice = people.plant(gql, token, neo4j_driver, tenant, "alice")
    bob = people.plant(gql, token, neo4j_driver, tenant, "bob")
    shared = people.attest_shared(gql, [alice, bob], "payments")
    return {"tenant": tenant, "admin": admin, "alice": alice, "bob": bob, "shared": shared}


@pytest.fixture
def solo(gql: Gql, token: Callable[..., str], neo4j_driver: Driver) -> dict[str, Any]:
    """One planted person and a plain member, for tests that need nobody else's data."""
    tenant, admin = people.new_org(gql, token, "erase")
    alice = people.plant(gql, token, neo4j_driver, tenant, "alice")
    member = token(tenant, "member", "planner")
    return {"tenant": tenant, "admin": admin, "alice": alice, "member": member}


def before_erasure(driver: Driver, p: Person) -> dict[str, int]:
    """What the database holds of the person, counted by Cypher, not by the API."""
    labels = by_label(driver, p.key)
    return {
        "tenant_facts": count(driver, people.TENANT_FACTS, key=p.tenant_key),
        "tenant_entities": count(driver, people.TENANT_ENTITIES, key=p.tenant_key),
        "tenant_sources": count(
            driver,
            "MATCH (x:Source {scope_key: $t, origin_key: $k}) RETURN count(x)",
            t=p.tenant_key,
            k=p.key,
        ),
        **labels,
    }


def assert_nothing_left(driver: Driver, settings: Settings, p: Person) -> None:
    assert count(driver, people.ROWS_OF_KEY, key=p.key) == 0
    assert count(driver, people.ROWS_WITH_MARKER, m=p.marker, tenant=p.tenant) == 0
    assert [path for path in p.sql_files(settings) if path.exists()] == []


def test_admin_erases_a_user_in_every_plane_and_nobody_else(
    gql: Gql, org: dict[str, Any], neo4j_driver: Driver, settings: Settings
) -> None:
    alice, bob = org["alice"], org["bob"]
    assert alice.sql_files(settings)[0].exists()
    seen = before_erasure(neo4j_driver, alice)
    bob_before = people.fingerprint(gql, neo4j_driver, [bob])

    receipt = ok(gql(ERASE_USER, org["admin"], u=alice.user))["eraseUser"]

    assert receipt["status"] == "DONE"
    assert receipt["kind"] == "USER"
    assert receipt["scope"] == "USER"
    assert receipt["requestedBy"] == "root"
    assert receipt["attempts"] == 1
    assert receipt["finishedAt"] >= receipt["requestedAt"]
    tenant_facts_after = count(neo4j_driver, people.TENANT_FACTS, key=alice.tenant_key)
    tenant_entities_after = count(neo4j_driver, people.TENANT_ENTITIES, key=alice.tenant_key)
    removed = receipt["removed"]
    assert removed["entries"] == seen["Memory"]
    assert removed["documents"] == seen["Document"]
    assert removed["chunks"] == seen["Chunk"]
    assert removed["spans"] == seen["PendingSpan"]
    assert removed["factSources"] == seen["Source"] + seen["tenant_sources"]
    assert removed["facts"] == seen["FACT"] + seen["tenant_facts"] - tenant_facts_after
    assert removed["entities"] == (seen["Entity"] + seen["tenant_entities"] - tenant_entities_after)
    assert removed["sqlDatabases"] == 1
    assert removed["sqlBytes"] > 0
    assert_nothing_left(neo4j_driver, settings, alice)
    assert people.fingerprint(gql, neo4j_driver, [bob]) == bob_before
    # The shared tenant fact lives on with Bob's source only.
    shared = ok(gql(FACT, bob.token, id=org["shared"]))["fact"]
    assert [s["text"] for s in shared["sources"]] == ["payments"]
    # The indexes answer nothing of hers, from her scope or the tenant's.
    for scope, who in ((Scope.USER, alice.token), (Scope.TENANT, bob.token)):
        hits = ok(gql(SEARCH, who, q=f"{alice.marker} ledger", scope=scope.value))["search"]
        assert [h for h in hits["hits"] if alice.marker in h["text"]] == []
        if scope is Scope.USER:
            assert hits["hits"] == []


def test_erase_me_takes_my_data_and_the_audit_keeps_only_counts(
    gql: Gql, org: dict[str, Any], neo4j_driver: Driver, settings: Settings
) -> None:
    bob = org["bob"]
    seen = before_erasure(neo4j_driver, bob)
    mine = ok(gql(ERASE_ME, bob.token))["eraseMe"]
    assert mine["requestedBy"] == "self"
    assert mine["removed"]["entries"] == seen["Memory"]
    assert_nothing_left(neo4j_driver, settings, bob)
    # Alice's data is what the erasure of Bob left: the shared fact has her source only.
    shared = ok(gql(FACT, org["alice"].token, id=org["shared"]))["fact"]
    assert len(shared["sources"]) == 1

    again = ok(gql(ERASE_USER, org["admin"], u=org["alice"].user))["eraseUser"]
    first = ok(gql(ERASURES, org["admin"]))["erasures"]
    assert [r["id"] for r in first["items"]] == [again["id"], mine["id"]]
    assert first["items"][1]["removed"] == mine["removed"]
    # Nothing is left anywhere, the shared fact went with its last source.
    assert count(neo4j_driver, people.TENANT_FACTS, key=bob.tenant_key) == 0
    if first["hasMore"]:
        rest = ok(gql(ERASURES, org["admin"], after=first["cursor"]))["erasures"]
        assert {r["id"] for r in rest["items"]}.isdisjoint({again["id"], mine["id"]})


def test_only_a_tenant_admin_may_name_a_user(
    gql: Gql, solo: dict[str, Any], token: Callable[..., str], neo4j_driver: Driver
) -> None:
    org, alice, member = solo, solo["alice"], solo["member"]
    before = people.fingerprint(gql, neo4j_driver, [alice])
    isolated_admin = token(org["tenant"], "root2", None, admin=True, isolated=True)
    other_admin = token("elsewhere-" + org["tenant"], "root", None, admin=True)
    assert code_of(gql(ERASE_USER, member, u=alice.user)) == "FORBIDDEN"
    assert code_of(gql(ERASE_USER, isolated_admin, u=alice.user)) == "FORBIDDEN"
    assert code_of(gql(ERASURES, member)) == "FORBIDDEN"
    # Another tenant's admin reaches only their own tenant: a user of that name there.
    elsewhere = ok(gql(ERASE_USER, other_admin, u=alice.user))["eraseUser"]
    assert elsewhere["removed"]["entries"] == 0
    assert code_of(gql(ERASE_USER, org["admin"], u="")) == "INVALID_ARGUMENT"
    assert people.fingerprint(gql, neo4j_driver, [alice]) == before


def test_an_id_no_token_could_carry_is_refused_and_a_miss_says_so(
    gql: Gql, solo: dict[str, Any], token: Callable[..., str], neo4j_driver: Driver
) -> None:
    """Each of these got a DONE receipt that removed nothing, looking like a success."""
    org, alice = solo, solo["alice"]
    before = people.fingerprint(gql, neo4j_driver, [alice])
    journal = count(
        neo4j_driver, "MATCH (e:Erasure {tenant_id: $t}) RETURN count(e)", t=alice.tenant
    )
    unnameable = [alice.user + "\x00", "\u200b" + alice.user, alice.user + " ", "\ufeff", "x" * 257]
    for bad in unnameable:
        refused = gql(ERASE_USER, org["admin"], u=bad)
        assert code_of(refused) == "INVALID_ARGUMENT", repr(bad)
        assert refused["errors"][0]["message"].startswith("userId must"), refused
    after = count(neo4j_driver, "MATCH (e:Erasure {tenant_id: $t}) RETURN count(e)", t=alice.tenant)
    assert after == journal  # refused before any job was opened
    # Ids are case-sensitive: another spelling names another user, and the receipt says that
    # nothing of them was found.
    miss = ok(gql(ERASE_USER, org["admin"], u=alice.user.upper()))["eraseUser"]
    assert (miss["status"], miss["matched"]) == ("DONE", False)
    assert all(v == 0 for v in miss["removed"].values())
    assert people.fingerprint(gql, neo4j_driver, [alice]) == before
    hit = ok(gql(ERASE_USER, org["admin"], u=alice.user))["eraseUser"]
    assert hit["matched"] is True
    assert hit["removed"]["entries"] > 0
    # The audit trail tells the two apart too.
    listed = ok(gql(ERASURES, org["admin"]))["erasures"]["items"]
    assert [(r["id"], r["matched"]) for r in listed] == [(hit["id"], True), (miss["id"], False)]


def test_a_token_narrowed_to_user_memory_cannot_erase_members(
    gql: Gql, solo: dict[str, Any], token: Callable[..., str], neo4j_driver: Driver
) -> None:
    """The admin role alone reached other members' data through a USER-only token."""
    org, alice = solo, solo["alice"]
    before = people.fingerprint(gql, neo4j_driver, [alice])
    narrowed = token(org["tenant"], "root3", None, admin=True, memory_scopes=[Scope.USER])
    refused = gql(ERASE_USER, narrowed, u=alice.user)
    assert code_of(refused) == "FORBIDDEN"
    assert "TENANT" in refused["errors"][0]["message"]
    # The same answer whether or not the user exists: no oracle.
    assert code_of(gql(ERASE_USER, narrowed, u="nobody-" + alice.marker)) == "FORBIDDEN"
    assert people.fingerprint(gql, neo4j_driver, [alice]) == before
    # Their own data stays theirs to erase.
    assert ok(gql(ERASE_ME, narrowed))["eraseMe"]["requestedBy"] == "self"
    granted = token(
        org["tenant"], "root4", None, admin=True, memory_scopes=[Scope.USER, Scope.TENANT]
    )
    assert ok(gql(ERASE_USER, granted, u=alice.user))["eraseUser"]["matched"] is True


def test_an_erased_admin_is_no_longer_named_by_the_erasures_they_asked_for(
    gql: Gql, solo: dict[str, Any], token: Callable[..., str], neo4j_driver: Driver
) -> None:
    org = solo
    boss = f"boss-{org['alice'].marker}x"
    boss_token = token(org["tenant"], boss, None, admin=True)
    asked = ok(gql(ERASE_USER, boss_token, u=org["alice"].user))["eraseUser"]
    assert asked["requestedBy"] == boss
    ok(gql(ERASE_USER, org["admin"], u=boss))
    records = ok(gql(ERASURES, org["admin"]))["erasures"]["items"]
    assert [r["requestedBy"] for r in records if r["id"] == asked["id"]] == ["erased user"]
    assert count(neo4j_driver, people.ROWS_WITH_MARKER, m=boss, tenant=org["tenant"]) == 0


async def test_erasure_takes_what_the_consolidator_made_of_harvested_spans(
    gql: Gql, token: Callable[..., str], neo4j_driver: Driver, settings: Settings, svc: Services
) -> None:
    tenant, admin = people.new_org(gql, token, "erase")
    marker = f"zq{uuid.uuid4().hex[:10]}9"
    user = f"erin-{marker}"
    grants = [Scope.USER, Scope.TENANT]
    who = token(tenant, user, "planner", memory_scopes=grants, sql_scopes=grants)
    erin = people.Person(tenant, user, marker, who)
    service = {"type": "service", "name": f"ledger-{marker}"}
    span = {
        "text": f"{marker}: the ledger moved to Kubernetes",
        "speaker": "Erin",
        "sourceId": "1",
        "facts": [{"subject": service, "predicate": "runs on", "objectValue": "Kubernetes"}],
    }
    ok(gql(cycle.HARVEST, who, spans=[span], gen=1))
    assert (await cycle.drain(svc, tenant, user)).consolidated == 1
    # One more span still queued when the erasure starts.
    ok(gql(cycle.HARVEST, who, spans=[{"text": f"{marker} again", "sourceId": "2"}], gen=2))
    made = by_label(neo4j_driver, erin.key)
    assert made["Document"] == 1  # the session's conversation, holding the turn
    assert made["Chunk"] >= 1
    assert made["PendingSpan"] == 2
    placed = count(
        neo4j_driver,
        "MATCH (x:Source {scope_key: $t, origin_key: $k}) RETURN count(x)",
        t=erin.tenant_key,
        k=erin.key,
    )
    assert placed == 1  # the service fact, placed in the tenant, quoting Erin's turn

    receipt = ok(gql(ERASE_USER, admin, u=user))["eraseUser"]

    assert receipt["status"] == "DONE"
    assert receipt["removed"]["spans"] == 2
    assert receipt["removed"]["chunks"] == made["Chunk"]
    assert_nothing_left(neo4j_driver, settings, erin)
    assert (await cycle.drain(svc, tenant, user)).leased == 0


FACT_KEYS = """MATCH ()-[f:FACT {scope_key: $t, id: $id}]->()
RETURN f.writer_key AS writer, coalesce(f.co_writer_keys, []) AS others"""


def _keys_of(driver: Driver, tenant_key: str, fact_id: str) -> list[tuple[str | None, list[str]]]:
    records, _, _ = driver.execute_query(FACT_KEYS, t=tenant_key, id=fact_id)
    return [(r["writer"], list(r["others"])) for r in records]


def test_a_sourceless_tenant_fact_goes_only_with_its_last_asserter(
    gql: Gql, token: Callable[..., str], neo4j_driver: Driver
) -> None:
    """The first writer's erasure took a sourceless tenant fact a colleague also asserted."""
    tenant, admin = people.new_org(gql, token, "erase")
    mark = uuid.uuid4().hex[:8]
    grants = people.ALL
    ann, ben, cat = (
        people.Person(
            tenant,
            f"{n}-{mark}",
            mark,
            token(tenant, f"{n}-{mark}", "planner", memory_scopes=grants, sql_scopes=grants),
        )
        for n in ("ann", "ben", "cat")
    )
    # Ann and Ben both assert one fact without a source; Cat quotes it from her chunk and Ben
    # asserts that one without a source as well.
    shared = people.fact({"type": "service", "name": f"vault-{mark}"}, "runs on", "rails")
    [first] = people.assert_facts(gql, ann.token, Scope.TENANT, False, [shared])
    [again] = people.assert_facts(gql, ben.token, Scope.TENANT, False, [shared])
    assert again["id"] == first["id"]
    quoted = people.attest_shared(gql, [cat], f"mill-{mark}")
    mill = people.fact({"type": "service", "name": f"mill-{mark}"}, "runs on", "rails")
    people.assert_facts(gql, ben.token, Scope.TENANT, False, [mill])
    assert _keys_of(neo4j_driver, ann.tenant_key, first["id"]) == [(ann.key, [ben.key])]
    assert _keys_of(neo4j_driver, ann.tenant_key, quoted) == [(cat.key, [ben.key])]

    ok(gql(ERASE_USER, admin, u=ann.user))
    ok(gql(ERASE_USER, admin, u=cat.user))

    # Both facts stay, Ben's alone now: nothing names Ann or Cat.
    assert _keys_of(neo4j_driver, ann.tenant_key, first["id"]) == [(ben.key, [])]
    assert _keys_of(neo4j_driver, ann.tenant_key, quoted) == [(ben.key, [])]
    for gone in (ann, cat):
        assert count(neo4j_driver, people.ROWS_OF_KEY, key=gone.key) == 0
    assert ok(gql(FACT, ben.token, id=first["id"]))["fact"] is not None

    receipt = ok(gql(ERASE_USER, admin, u=ben.user))["eraseUser"]

    assert receipt["removed"]["facts"] == 2
    assert _keys_of(neo4j_driver, ann.tenant_key, first["id"]) == []
    assert _keys_of(neo4j_driver, ann.tenant_key, quoted) == []
