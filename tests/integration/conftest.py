"""Integration fixtures: the real app served by uvicorn on a free port, on the real Neo4j.

`make test` starts the managed Neo4j before pytest and stops it after. Without a reachable
server these tests fail loudly; they are never skipped.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver, GraphDatabase

from palimpsest.config import Settings
from palimpsest.cypher.driver import executor
from palimpsest.identity import Role, Scope
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.local.graphiql import install_assets
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest.server import serve_in_thread

Gql = Callable[..., dict[str, Any]]

CROSS_SCOPE_EDGES = """
MATCH (a)-[r]->(b)
WHERE a.scope_key IS NOT NULL AND b.scope_key IS NOT NULL
  AND (a.scope_key <> b.scope_key OR r.scope_key IS NULL OR r.scope_key <> a.scope_key)
RETURN count(r) AS n
"""


@pytest.fixture(scope="session")
def settings() -> Settings:
    # The suite sends hundreds of tokenless requests from 127.0.0.1 within minutes (fuzzing,
    # edge checks, GraphiQL), more than the default allows one address; the limit itself is
    # tested on servers of its own (test_doors.py, tests/unit/middleware/test_ratelimit.py).
    # Start-up's warm-up is off: each server of the suite would plan every statement again
    # while the tests run; test_readiness.py's servers warm up. No consolidator workers run
    # in the suite's servers: the memory-cycle tests steer consolidation themselves
    # (cycle.py); test_served_consolidators.py's servers run them.
    return Settings(
        anonymous_rate_limit_per_second=20.0,
        anonymous_rate_limit_burst=500,
        warmup_seconds=0.0,
        serve_consolidators=0,
    )


@pytest.fixture(scope="session")
def live_server_url(settings: Settings) -> Iterator[str]:
    install_assets(settings.graphiql_dir, settings.local.npm_registry_url)
    with serve_in_thread(settings) as url:
        yield url


@pytest.fixture(scope="session")
def tenant() -> str:
    """A fresh tenant per test session, so leftovers of earlier runs never interfere."""
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def token(settings: Settings) -> Callable[..., str]:
    keys = load_keys(settings)

    def make(
        tenant: str,
        user: str | None = None,
        agent: str | None = None,
        *,
        admin: bool = False,
        operator: bool = False,
        isolated: bool = False,
        memory_scopes: list[Scope] | None = None,
        sql_scopes: list[Scope] | None = None,
        ttl: int = 600,
        session: str | None = None,
        run: str | None = None,
        model: str | None = None,
    ) -> str:
        roles = {r for r, on in ((Role.ADMIN, admin), (Role.OPERATOR, operator)) if on}
        return mint(
            keys,
            tenant=tenant,
            user=user,
            agent=agent,
            session=session,
            run=run,
            model=model,
            roles=roles,
            isolated=isolated,
            memory_scopes=memory_scopes,
            sql_scopes=sql_scopes,
            ttl_seconds=ttl,
        )

    return make


@pytest.fixture(scope="session")
def dev_token(token: Callable[..., str], tenant: str) -> str:
    return token(tenant, "dev-user", "dev-agent")


@pytest.fixture
def tenant_id() -> str:
    """A tenant of one test's own, for tests that count or erase a whole tenant."""
    return f"t-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def who(token: Callable[..., str], tenant: str) -> str:
    """The token of a user of one test's own in the session's tenant, as the agent "writer"
    (a file whose tests need another principal defines its own ``who``)."""
    return token(tenant, f"u-{uuid.uuid4().hex[:10]}", "writer")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under this folder is the integration tier (it needs the real Neo4j), so no
    file has to remember the marker."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def http(live_server_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server_url, timeout=30) as client:
        yield client


def gql_over(http: httpx.Client) -> Gql:
    """GraphQL calls over one HTTP client: ``run(query, token, **variables)`` -> the body."""

    def run(query: str, token: str | None = None, **variables: Any) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = http.post(
            "/graphql", json={"query": query, "variables": variables}, headers=headers
        )
        body: dict[str, Any] = response.json()
        return body

    return run


@pytest.fixture(scope="session")
def gql(http: httpx.Client) -> Gql:
    return gql_over(http)


@pytest.fixture(scope="session")
def postgres_settings(settings: Settings) -> Settings:
    """The same app with SQL Memory on the managed PostgreSQL (`make test` starts it)."""
    return settings.replace(sql_backend="postgres")


@pytest.fixture(scope="session")
def postgres_http(postgres_settings: Settings) -> Iterator[httpx.Client]:
    with (
        serve_in_thread(postgres_settings) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield client


@pytest.fixture(scope="session")
def neo4j_driver(settings: Settings) -> Iterator[Driver]:
    with GraphDatabase.driver(settings.bolt_uri, auth=credentials(settings)) as driver:
        yield driver


@pytest.fixture(scope="session")
async def svc(settings: Settings) -> AsyncIterator[Services]:
    """The services a consolidator worker opens, for tests that steer it in-process."""
    async with open_services(settings) as services:
        yield services


@pytest.fixture(autouse=True, scope="module")
def no_cross_scope_relationships(neo4j_driver: Driver) -> Iterator[None]:
    """After every module: no relationship anywhere joins two scopes (docs/spec.md, Placement)."""
    yield
    records, _, _ = neo4j_driver.execute_query(CROSS_SCOPE_EDGES)
    assert records[0]["n"] == 0


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the scoped statements the executor sends, in order (a background loop's
    reads of the schema record are unscoped)."""
    names: list[str] = []
    run = executor._run

    async def counted(tx: Any, statement: executor.Statement, *args: Any) -> list[executor.Row]:
        if statement.scoped:
            names.append(statement.name)
        return await run(tx, statement, *args)

    monkeypatch.setattr(executor, "_run", counted)
    return names
