"""Every operation two doors expose gives the same answer and the same error code for the same
input, whichever door it came through: GraphQL and MCP are adapters over one core."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.conftest import Gql

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Door:
    """One operation through both doors: a GraphQL document and how to read its answer, and
    the MCP tool and arguments that mean the same."""

    name: str
    query: str
    variables: dict[str, Any]
    answer: Callable[[dict[str, Any]], Any]
    tool: str
    arguments: dict[str, Any]
    tool_answer: Callable[[dict[str, Any]], Any]


def _hits(hits: list[dict[str, Any]]) -> list[tuple[str, str | None, str]]:
    return [(h["kind"].lower(), h.get("key"), h["scope"]) for h in hits]


SEED = "Bob waters the ficus on Mondays and keeps the watering can by the door."
ANSWERS = [
    Door(
        "recall",
        "query($q: String!) { recall(scope: USER, query: $q, topK: 5)"
        " { scopes hits { kind key scope } } }",
        {"q": "when is the ficus watered?"},
        lambda d: (d["recall"]["scopes"], _hits(d["recall"]["hits"])),
        "recall",
        {"query": "when is the ficus watered?", "top_k": 5},
        lambda r: (r["scopes"], _hits(r["hits"])),
    ),
    Door(
        "search",
        "query($q: String!) { search(scope: USER, query: $q, topK: 5, sources: [NOTES])"
        " { scopes hits { kind key scope } } }",
        {"q": "watering can"},
        lambda d: (d["search"]["scopes"], _hits(d["search"]["hits"])),
        "search",
        {"query": "watering can", "top_k": 5, "sources": ["notes"]},
        lambda r: (r["scopes"], _hits(r["hits"])),
    ),
    Door(
        "sqlQuery",
        'query { sqlQuery(scope: USER, statement: "SELECT 40 + 2 AS n") { columns rows } }',
        {},
        lambda d: (d["sqlQuery"]["columns"], d["sqlQuery"]["rows"]),
        "sql_query",
        {"statement": "SELECT 40 + 2 AS n"},
        lambda r: (r["columns"], r["rows"]),
    ),
]

# The same bad input through both doors: (name, GraphQL document, MCP tool, arguments).
REFUSALS: list[tuple[str, str, str, dict[str, Any]]] = [
    (
        "topK 0",
        '{ recall(scope: USER, query: "x", topK: 0) { scopes } }',
        "recall",
        {"query": "x", "top_k": 0},
    ),
    (
        "topK 51",
        '{ search(scope: USER, query: "x", topK: 51) { scopes } }',
        "search",
        {"query": "x", "top_k": 51},
    ),
    (
        "GLOBAL as a member",
        '{ recall(scope: GLOBAL, query: "x") { scopes } }',
        "recall",
        {"query": "x", "scope": "GLOBAL"},
    ),
    (
        "an unknown source",
        '{ search(scope: USER, query: "x", sources: []) { scopes } }',
        "search",
        {"query": "x", "sources": []},
    ),
    (
        "SQL in TENANT",
        '{ sqlQuery(scope: TENANT, statement: "SELECT 1") { rows } }',
        "sql_query",
        {"statement": "SELECT 1", "scope": "TENANT"},
    ),
    (
        "a write in sqlQuery",
        '{ sqlQuery(scope: USER, statement: "DELETE FROM t") { rows } }',
        "sql_query",
        {"statement": "DELETE FROM t"},
    ),
    (
        "a blank key",
        'mutation { memorySet(scope: USER, key: "", value: 1) { key } }',
        "remember",
        {"key": "", "value": 1},
    ),
    (
        "AGENT without an agent",
        'mutation { memorySet(scope: AGENT, key: "k", value: 1) { key } }',
        "remember",
        {"key": "k", "value": 1, "scope": "AGENT"},
    ),
]


@asynccontextmanager
async def mcp_client(base_url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client,
    ):
        yield client


async def test_both_doors_give_the_same_answers_and_the_same_codes(
    live_server_url: str, token: Callable[..., str], tenant: str, gql: Gql
) -> None:
    # Without an agent name, so AGENT is out of reach through either door.
    bob = token(tenant, "doors-bob")
    seeded = gql(
        'mutation($v: JSON!) { memorySet(scope: USER, key: "plants/ficus", value: $v,'
        " embed: true) { key } }",
        bob,
        v=SEED,
    )
    assert "errors" not in seeded, seeded
    async with mcp_client(live_server_url, bob) as client:
        for door in ANSWERS:
            body = gql(door.query, bob, **door.variables)
            assert "errors" not in body, (door.name, body)
            result = await client.call_tool(door.tool, door.arguments)
            assert not result.is_error, (door.name, result.structured_content)
            assert result.structured_content is not None
            via_graphql = door.answer(body["data"])
            assert via_graphql == door.tool_answer(result.structured_content), door.name
            assert via_graphql, f"{door.name}: an empty answer proves nothing"
        for name, query, tool, arguments in REFUSALS:
            body = gql(query, bob)
            graphql_codes = {e["extensions"]["code"] for e in body.get("errors", [])}
            result = await client.call_tool(tool, arguments)
            assert result.is_error, name
            assert result.structured_content is not None
            mcp_code = result.structured_content["error"]["code"]
            assert graphql_codes == {mcp_code}, (name, graphql_codes, mcp_code)
