"""Tenant shards on two managed Neo4j servers of this module's own (small heaps, their own
homes and ports; the shared server on 7687 only keeps its usual role for the suite's
fixtures): tenants on both, GLOBAL on the designated one, recall across, the start-up check
of the directory, and a shard down (docs/decisions/0011-tenant-shards.md)."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from neo4j import GraphDatabase
from pydantic import SecretStr

from palimpsest.config import Settings
from palimpsest.cypher.shards import place
from palimpsest.errors import Unavailable
from palimpsest.identity import Scope
from palimpsest.jobs.consolidator import Totals, work
from palimpsest.local import neo4j as neo4j_local
from palimpsest.runtime import check_configured_model, open_services
from palimpsest.server import serve_in_thread
from palimpsest_suites.faults import prepare_home
from tests.integration.answers import ok, only_code_of
from tests.integration.conftest import Gql, gql_over
from tests.integration.cycle import config, harvest, scope_of
from tests.integration.test_mcp import call as call_tool
from tests.integration.test_mcp import http_client

# Away from the shared server (7687/7474), bench faults' (7698/7485) and the scale server's
# (7699/7486).
PORTS = {"a": (7711, 7498), "b": (7712, 7499)}
NAMES = ["a", "b"]
SET = """mutation($scope: Scope!, $key: String!, $value: JSON!) {
  memorySet(scope: $scope, key: $key, value: $value, embed: true) { key } }"""
GET = "query($scope: Scope!, $key: String!) { memory(scope: $scope, key: $key) { value } }"
RECALL = """query($q: String!, $also: [Scope!]) {
  recall(scope: USER, query: $q, topK: 10, alsoScopes: $also) {
    scopes hits { scope key score } } }"""


def quiet(_: str) -> None:
    return None


def server_settings(home: Path, bolt: int, http: int) -> Settings:
    return Settings().model_copy(
        update={
            "home": home,
            "neo4j_managed": True,
            "neo4j_uri": None,
            "neo4j_password": None,
            "neo4j_bolt_port": bolt,
            "neo4j_http_port": http,
            "neo4j_heap": "256m",
            "neo4j_pagecache": "64m",
            "neo4j_extension": False,  # the Cypher full-text legs: no compile per run
        }
    )


# Kept between runs (as the bench's scale server keeps its home): a fresh server applies the
# whole schema at the API's first start, minutes on a busy machine.
HOMES = Path(tempfile.gettempdir()) / "palimpsest-shards-test"


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Settings]]:
    """Both servers, started here unless already running; those started here stop after."""
    ours: list[Settings] = []
    found: dict[str, Settings] = {}
    try:
        for name, (bolt, http) in PORTS.items():
            s = server_settings(HOMES / name, bolt, http)
            if not neo4j_local.status(s).running:
                prepare_home(s, Settings(), quiet)
                neo4j_local.start(s, say=quiet)
                ours.append(s)
            found[name] = s
        yield found
    finally:
        for s in ours:
            if neo4j_local.status(s).running:
                neo4j_local.stop(s, say=quiet)


@pytest.fixture(scope="module")
def sharded(settings: Settings, servers: dict[str, Settings]) -> Settings:
    listed = [
        {
            "name": name,
            "uri": s.bolt_uri,
            "user": "neo4j",
            "password_file": str(s.neo4j_password_file),
        }
        for name, s in servers.items()
    ]
    return settings.model_copy(
        update={
            "neo4j_shards": SecretStr(orjson.dumps(listed).decode()),
            "neo4j_directory_shard": "a",
            "neo4j_managed": False,
            "search_engine": "cypher",
        }
    )


@pytest.fixture(scope="module")
def api(sharded: Settings) -> Iterator[httpx.Client]:
    # A fresh server's schema (indexes online) can take minutes on a busy machine.
    with (
        serve_in_thread(sharded, timeout=900) as url,
        httpx.Client(base_url=url, timeout=120) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def call(api: httpx.Client) -> Gql:
    return gql_over(api)


def tenant_on(shard: str) -> str:
    """A fresh tenant the placement policy puts on ``shard``."""
    while True:
        tenant = f"t-{uuid.uuid4().hex[:10]}"
        if place(tenant, NAMES) == shard:
            return tenant


def count(server: Settings, cypher: str, **params: Any) -> int:
    with GraphDatabase.driver(server.bolt_uri, auth=server.neo4j_credentials()) as driver:
        records, _, _ = driver.execute_query(cypher, params)
        return int(records[0]["n"])


NOTES_OF = "MATCH (m:Memory {tenant_id: $tenant}) RETURN count(m) AS n"
ENTRY = "MATCH (t:TenantShard {tenant_id: $tenant, shard: $shard}) RETURN count(t) AS n"


def test_each_tenant_is_written_and_read_on_its_own_shard(
    call: Gql, token: Callable[..., str], servers: dict[str, Settings]
) -> None:
    on_a, on_b = tenant_on("a"), tenant_on("b")
    for tenant in (on_a, on_b):
        who = token(tenant, "alice", "planner")
        ok(call(SET, who, scope="USER", key="pets/cat", value=f"the cat of {tenant}"))
        assert ok(call(GET, who, scope="USER", key="pets/cat"))["memory"]["value"] == (
            f"the cat of {tenant}"
        )
    assert count(servers["a"], NOTES_OF, tenant=on_a) == 1
    assert count(servers["b"], NOTES_OF, tenant=on_a) == 0
    assert count(servers["b"], NOTES_OF, tenant=on_b) == 1
    assert count(servers["a"], NOTES_OF, tenant=on_b) == 0
    # The directory lives on the designated shard only, one entry per tenant that wrote.
    assert count(servers["a"], ENTRY, tenant=on_a, shard="a") == 1
    assert count(servers["a"], ENTRY, tenant=on_b, shard="b") == 1
    assert count(servers["b"], "MATCH (t:TenantShard) RETURN count(t) AS n") == 0


def test_global_lives_on_the_designated_shard_and_recall_asks_both(
    call: Gql, token: Callable[..., str], servers: dict[str, Settings]
) -> None:
    on_b = tenant_on("b")
    operator = token(
        on_b, "ops", "planner", operator=True, memory_scopes=[Scope.USER, Scope.GLOBAL]
    )
    marker = uuid.uuid4().hex[:8]
    everyone = f"Quokkas {marker} are marsupials that live on Rottnest Island"
    mine = f"My quokka {marker} photo from Rottnest Island is on the fridge"
    ok(call(SET, operator, scope="GLOBAL", key=f"animals/{marker}", value=everyone))
    ok(call(SET, operator, scope="USER", key=f"photos/{marker}", value=mine))
    on_global = "MATCH (m:Memory {scope: 'GLOBAL', key: $key}) RETURN count(m) AS n"
    assert count(servers["a"], on_global, key=f"animals/{marker}") == 1
    assert count(servers["b"], on_global, key=f"animals/{marker}") == 0
    assert count(servers["b"], NOTES_OF, tenant=on_b) == 1, "the user's note on b"
    answer = ok(call(RECALL, operator, q=f"quokka {marker} Rottnest", also=["GLOBAL"]))["recall"]
    assert answer["scopes"] == ["USER", "GLOBAL"]
    hits = [(h["scope"], h["key"]) for h in answer["hits"]]
    # One hit each, fused by rank: the first scope asked first.
    assert hits[:2] == [("USER", f"photos/{marker}"), ("GLOBAL", f"animals/{marker}")]
    # A tenant on the designated shard reads GLOBAL in the same plan as its own scopes.
    on_a = tenant_on("a")
    other = token(on_a, "ops", "planner", operator=True, memory_scopes=[Scope.USER, Scope.GLOBAL])
    found = ok(call(RECALL, other, q=f"quokka {marker} Rottnest", also=["GLOBAL"]))["recall"]
    assert [(h["scope"], h["key"]) for h in found["hits"]][:1] == [("GLOBAL", f"animals/{marker}")]


ASSERT_GLOBAL = """mutation($name: String!) {
  assertFacts(scope: GLOBAL, place: false, facts: [{subject: {type: "plant", name: $name},
    predicate: "needs", objectValue: "sun"}]) { created } }"""


def test_a_global_fact_is_written_from_a_tenant_on_another_shard(
    call: Gql, token: Callable[..., str], servers: dict[str, Settings]
) -> None:
    # The tenant's ontology is on b, GLOBAL on a: one transaction cannot hold both.
    operator = token(
        tenant_on("b"), "ops", "planner", operator=True, memory_scopes=[Scope.USER, Scope.GLOBAL]
    )
    name = f"Aloe {uuid.uuid4().hex[:8]}"
    [made] = ok(call(ASSERT_GLOBAL, operator, name=name))["assertFacts"]
    assert made["created"]
    on_global = "MATCH (e:Entity {scope: 'GLOBAL', name: $name}) RETURN count(e) AS n"
    assert count(servers["a"], on_global, name=name) == 1
    assert count(servers["b"], on_global, name=name) == 0


def test_bookmarks_of_two_shards_travel_in_one_header(
    api: httpx.Client, token: Callable[..., str]
) -> None:
    on_b = tenant_on("b")
    operator = token(
        on_b, "ops", "planner", operator=True, memory_scopes=[Scope.USER, Scope.GLOBAL]
    )
    headers = {"Authorization": f"Bearer {operator}"}
    marker = uuid.uuid4().hex[:8]
    sent = {"query": SET, "variables": {"scope": "GLOBAL", "key": marker, "value": "g"}}
    first = api.post("/graphql", json=sent, headers=headers)
    bookmark = first.headers["x-palimpsest-bookmark"]
    sent = {"query": SET, "variables": {"scope": "USER", "key": marker, "value": "u"}}
    second = api.post("/graphql", json=sent, headers={**headers, "x-palimpsest-bookmark": bookmark})
    assert "errors" not in second.json(), second.json()
    both = second.headers["x-palimpsest-bookmark"]
    read = {"query": RECALL, "variables": {"q": marker, "also": ["GLOBAL"]}}
    answer = api.post("/graphql", json=read, headers={**headers, "x-palimpsest-bookmark": both})
    assert "errors" not in answer.json(), answer.json()


async def test_mcp_calls_run_on_their_tenants_shard(
    api: httpx.Client, token: Callable[..., str], servers: dict[str, Settings]
) -> None:
    on_b = tenant_on("b")
    url = str(api.base_url).rstrip("/")
    async with http_client(url, token(on_b, "dana", "scribe")) as client:
        # A fact batch is written in a transaction that binds its scopes inside (the
        # unbound handle): it runs on b only if the MCP call carries its tenant.
        fact = {
            "subject": {"type": "person", "name": "Dana"},
            "predicate": "lives in",
            "object": {"type": "city", "name": "Lisbon"},
        }
        await call_tool(client, "assert_facts", facts=[fact], place=False)
        await call_tool(
            client,
            "import_document",
            markdown="# Trip\n\nThe ferry to Hydra leaves at 7:40 from Piraeus gate E8.\n",
            path="/notes/trip.md",
        )
        found = await call_tool(client, "search", query="ferry gate", sources=["documents"])
    assert found["hits"], found
    documents = "MATCH (d:Document {tenant_id: $tenant}) RETURN count(d) AS n"
    assert count(servers["b"], documents, tenant=on_b) > 0
    assert count(servers["a"], documents, tenant=on_b) == 0
    facts = "MATCH ()-[f:FACT {tenant_id: $tenant}]->() RETURN count(f) AS n"
    assert count(servers["b"], facts, tenant=on_b) == 1


def test_start_up_refuses_a_directory_entry_naming_an_unconfigured_shard(
    sharded: Settings, servers: dict[str, Settings]
) -> None:
    stray = f"t-{uuid.uuid4().hex[:10]}"
    add = "CREATE (:TenantShard {tenant_id: $tenant, shard: 'retired'}) RETURN 1 AS n"
    drop = "MATCH (t:TenantShard {tenant_id: $tenant}) DELETE t RETURN 1 AS n"
    count(servers["a"], add, tenant=stray)
    try:
        with pytest.raises(Unavailable) as refused:
            asyncio.run(check_configured_model(sharded))
        message = refused.value.message
        assert "retired" in message
        assert "\n" not in message
        assert stray not in message
    finally:
        count(servers["a"], drop, tenant=stray)
    asyncio.run(check_configured_model(sharded))  # without it, the start goes through


def test_consolidator_workers_lease_from_every_shard(
    call: Gql, token: Callable[..., str], sharded: Settings, servers: dict[str, Settings]
) -> None:
    tenants = {"a": tenant_on("a"), "b": tenant_on("b")}
    for tenant in tenants.values():
        harvest(call, token(tenant, "alice", "planner"), [f"Alice met Bob in {tenant}"])
    done = "MATCH (p:PendingSpan {scope_key: $key}) WHERE p.status = $status RETURN count(p) AS n"

    async def drain_all() -> None:
        async with open_services(sharded) as svc:
            await work(svc, config("shard-worker"), Totals(), asyncio.Event(), once=True)

    asyncio.run(drain_all())
    for shard, tenant in tenants.items():
        key = scope_of(tenant, "alice")[2]
        assert count(servers[shard], done, key=key, status="done") == 1, shard


def test_a_shard_down_fails_only_its_tenants_requests(
    call: Gql, token: Callable[..., str], servers: dict[str, Settings]
) -> None:
    on_a, on_b = tenant_on("a"), tenant_on("b")
    alice_a, alice_b = token(on_a, "alice", "planner"), token(on_b, "alice", "planner")
    for who in (alice_a, alice_b):
        ok(call(SET, who, scope="USER", key="k", value="before"))
    neo4j_local.stop(servers["b"], say=quiet)
    refused = call(GET, alice_b, scope="USER", key="k")
    assert only_code_of(refused) == "UNAVAILABLE"
    said = orjson.dumps(refused).decode()
    assert on_a not in said
    assert on_b not in said, "the refusal names no tenant, not even the caller's"
    ok(call(SET, alice_a, scope="USER", key="k", value="after"))
    assert ok(call(GET, alice_a, scope="USER", key="k"))["memory"]["value"] == "after"
