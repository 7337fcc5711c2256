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


# Placeholders the test fills with ids it seeds: Bob's document (two revisions) and Carol's.
DOC, FOREIGN = "<doc>", "<foreign>"
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
    Door(
        "documentHistory",
        "query($id: ID!) { documentHistory(scope: USER, id: $id)"
        " { items { revision deleted changedChunks } } }",
        {"id": DOC},
        lambda d: [
            (i["revision"], i["deleted"], i["changedChunks"]) for i in d["documentHistory"]["items"]
        ],
        "document_history",
        {"id": DOC},
        lambda r: [(i["revision"], i["deleted"], i["changed_chunks"]) for i in r["revisions"]],
    ),
    Door(
        "document(revision:)",
        "query($id: ID!) { document(scope: USER, id: $id, revision: 1)"
        " { markdown summary { revision } chunks { id } } }",
        {"id": DOC},
        lambda d: (
            d["document"]["markdown"],
            d["document"]["summary"]["revision"],
            [c["id"] for c in d["document"]["chunks"]],
        ),
        "document_revision",
        {"id": DOC, "revision": 1},
        lambda r: (
            r["document"]["markdown"],
            r["document"]["revision"],
            [c["id"] for c in r["document"]["chunks"]],
        ),
    ),
    Door(
        "documentDiff",
        "query($id: ID!) { documentDiff(scope: USER, id: $id, fromRevision: 1, toRevision: 2) }",
        {"id": DOC},
        lambda d: d["documentDiff"],
        "document_diff",
        {"id": DOC, "from_revision": 1, "to_revision": 2},
        lambda r: r["diff"],
    ),
    # Last: each door writes a revision equal to revision 1.
    Door(
        "restoreDocument",
        "mutation($id: ID!) { restoreDocument(scope: USER, id: $id, revision: 1)"
        " { markdown chunks { id } } }",
        {"id": DOC},
        lambda d: (
            d["restoreDocument"]["markdown"],
            [c["id"] for c in d["restoreDocument"]["chunks"]],
        ),
        "restore_document",
        {"id": DOC, "revision": 1},
        lambda r: (r["document"]["markdown"], [c["id"] for c in r["document"]["chunks"]]),
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
    (
        "a revision that does not exist",
        '{ document(scope: USER, id: "<doc>", revision: 99) { markdown } }',
        "document_revision",
        {"id": DOC, "revision": 99},
    ),
    (
        "another scope's document history",
        '{ documentHistory(scope: USER, id: "<foreign>") { hasMore } }',
        "document_history",
        {"id": FOREIGN},
    ),
    (
        "another scope's document revision",
        '{ document(scope: USER, id: "<foreign>", revision: 1) { markdown } }',
        "document_revision",
        {"id": FOREIGN, "revision": 1},
    ),
    (
        "fromRevision after toRevision",
        '{ documentDiff(scope: USER, id: "<doc>", fromRevision: 2, toRevision: 1) }',
        "document_diff",
        {"id": DOC, "from_revision": 2, "to_revision": 1},
    ),
    (
        "restore a missing revision",
        'mutation { restoreDocument(scope: USER, id: "<doc>", revision: 99) { markdown } }',
        "restore_document",
        {"id": DOC, "revision": 99},
    ),
    (
        "restore another scope's document",
        'mutation { restoreDocument(scope: USER, id: "<foreign>", revision: 1) { markdown } }',
        "restore_document",
        {"id": FOREIGN, "revision": 1},
    ),
]

IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m)
  { summary { id } chunks { id text } } }"""
UPDATE = """mutation($id: ID!, $t: String!) {
  updateChunk(scope: USER, id: $id, text: $t, revision: 1) { revision } }"""


def _seed_document(gql: Gql, who: str) -> str:
    """A document with two revisions (an import, then a chunk edit): its id."""
    body = gql(IMPORT, who, m="# Ficus\n\nWater it on Mondays.\n")
    assert "errors" not in body, body
    doc = body["data"]["importDocument"]
    para = next(c for c in doc["chunks"] if c["text"].startswith("Water"))
    edited = gql(UPDATE, who, id=para["id"], t="Water it on Thursdays.\n")
    assert "errors" not in edited, edited
    return str(doc["summary"]["id"])


def _fill(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with the placeholders replaced by the seeded ids."""
    if isinstance(value, str):
        for placeholder, found in ids.items():
            value = value.replace(placeholder, found)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


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
    ids = {DOC: _seed_document(gql, bob), FOREIGN: _seed_document(gql, token(tenant, "carol"))}
    async with mcp_client(live_server_url, bob) as client:
        for door in ANSWERS:
            body = gql(door.query, bob, **_fill(door.variables, ids))
            assert "errors" not in body, (door.name, body)
            result = await client.call_tool(door.tool, _fill(door.arguments, ids))
            assert not result.is_error, (door.name, result.structured_content)
            assert result.structured_content is not None
            via_graphql = door.answer(body["data"])
            assert via_graphql == door.tool_answer(result.structured_content), door.name
            assert via_graphql, f"{door.name}: an empty answer proves nothing"
        for name, query, tool, arguments in REFUSALS:
            body = gql(_fill(query, ids), bob)
            graphql_codes = {e["extensions"]["code"] for e in body.get("errors", [])}
            result = await client.call_tool(tool, _fill(arguments, ids))
            assert result.is_error, name
            assert result.structured_content is not None
            mcp_code = result.structured_content["error"]["code"]
            assert graphql_codes == {mcp_code}, (name, graphql_codes, mcp_code)
