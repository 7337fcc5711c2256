"""Neo4j clusters: the routing scheme (`neo4j://`) against the managed single server, and the
access mode every transaction carries (reads may go to readers, writes go to the leader)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import httpx
import pytest
from neo4j import AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import CrossScopeStatement, Database, Neo4jExecutor
from palimpsest.errors import DatabaseFailure
from palimpsest.local.neo4j import credentials
from palimpsest.server import serve_in_thread

# A write that leaves nothing behind; only this test runs it.
PROBE = CrossScopeStatement("routing_probe", "CREATE (n:RoutingProbe) DELETE n RETURN 1 AS one")


def routed(settings: Settings) -> Settings:
    return settings.replace(neo4j_uri=f"neo4j://127.0.0.1:{settings.neo4j.bolt_port}")


def test_the_api_runs_on_the_routing_scheme(
    settings: Settings, token: Callable[..., str], tenant: str
) -> None:
    who = token(tenant, f"routed-{uuid.uuid4().hex[:6]}", "planner")
    headers = {"Authorization": f"Bearer {who}"}
    with serve_in_thread(routed(settings)) as url, httpx.Client(base_url=url, timeout=30) as c:
        write = 'mutation { memorySet(scope: USER, key: "r", value: "routed") { key } }'
        assert "errors" not in c.post("/graphql", json={"query": write}, headers=headers).json()
        read = '{ memory(scope: USER, key: "r") { value } }'
        body = c.post("/graphql", json={"query": read}, headers=headers).json()
        assert body["data"]["memory"]["value"] == "routed"
        assert c.get("/readyz").json()["status"] == "ready"


async def test_every_transaction_carries_its_access_mode(settings: Settings) -> None:
    """Neo4j refuses a write inside a READ transaction: so reads are really sent as reads
    (a cluster may route them to a follower) and writes as writes (to the leader)."""
    driver = AsyncGraphDatabase.driver(routed(settings).bolt_uri, auth=credentials(settings))
    try:
        db = Database(Neo4jExecutor(driver, settings.neo4j.database))
        assert await db.write(PROBE) == [{"one": 1}]
        with pytest.raises(DatabaseFailure) as caught:
            await db.read(PROBE)
        assert caught.value.details["driverCode"] == "Neo.ClientError.Statement.AccessMode"
        routing = await driver.get_server_info()
        assert routing.address.port == settings.neo4j.bolt_port
    finally:
        await driver.close()
