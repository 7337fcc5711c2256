"""Every operation two doors expose gives the same answer and the same error code for the same
input, whichever door it came through: GraphQL and MCP are adapters over one core.

The cases are in door_cases.py and door_refusals.py. The test lists the live server's MCP
tools and fails for any tool without a good call, a bad argument, another scope's id and GLOBAL
without admin (unless ``EXEMPT`` says why the kind cannot apply), so a new tool cannot skip the
comparison.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.conftest import Gql
from tests.integration.door_cases import ANSWERS, CAROLS_KEY, SEED, Kind, Refusal
from tests.integration.door_refusals import EXEMPT, REFUSALS, global_refusals

KINDS: tuple[Kind, ...] = ("good", "bad", "foreign", "global")
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m)
  { summary { id } chunks { id text } } }"""
UPDATE = """mutation($id: ID!, $t: String!) {
  updateChunk(scope: USER, id: $id, text: $t, revision: 1) { revision } }"""
ASSERT = """mutation($f: [FactInput!]!) { assertFacts(scope: USER, place: false, facts: $f)
  { fact { id } } }"""


def _import(gql: Gql, who: str, markdown: str) -> tuple[str, str]:
    """A new document: its id and the id of its first paragraph."""
    body = gql(IMPORT, who, m=markdown)
    assert "errors" not in body, body
    doc = body["data"]["importDocument"]
    para = next(c for c in doc["chunks"] if c["text"].startswith("Water"))
    return str(doc["summary"]["id"]), str(para["id"])


def _seed_document(gql: Gql, who: str) -> str:
    """A document with two revisions (an import, then a chunk edit): its id."""
    doc, para = _import(gql, who, "# Ficus\n\nWater it on Mondays.\n")
    edited = gql(UPDATE, who, id=para, t="Water it on Thursdays.\n")
    assert "errors" not in edited, edited
    return doc


def _fact(gql: Gql, who: str, name: str, predicate: str, value: str, valid_at: str) -> str:
    fact = {
        "subject": {"type": "plant", "name": name},
        "predicate": predicate,
        "objectValue": value,
        "validAt": valid_at,
    }
    body = gql(ASSERT, who, f=[fact])
    assert "errors" not in body, body
    return str(body["data"]["assertFacts"][0]["fact"]["id"])


def _set(gql: Gql, who: str, key: str, value: str) -> None:
    body = gql(
        "mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v,"
        " embed: true) { key } }",
        who,
        k=key,
        v=value,
    )
    assert "errors" not in body, body


def _seed(gql: Gql, bob: str, carol: str) -> dict[str, str]:
    """Bob's notes, documents and facts (twins for the writes), and Carol's: the ids."""
    _set(gql, bob, "plants/ficus", SEED)
    for key in ("gone/1", "gone/2"):
        _set(gql, bob, key, "to be deleted")
    _set(gql, carol, CAROLS_KEY, "Carol's only")
    created = gql(
        "mutation { updateMemoryFile(scope: USER, command: {command: CREATE,"
        ' path: "/memories/carol.md", fileText: "Carol\u0027s only"}) { path } }',
        carol,
    )
    assert "errors" not in created, created
    ids = {"<doc>": _seed_document(gql, bob), "<foreign>": _seed_document(gql, carol)}
    for twin in ("1", "2"):
        ids[f"<chunk-{twin}>"] = _import(gql, bob, f"# Twin {twin}\n\nWater it daily.\n")[1]
        fern = f"Fern {twin}"
        ids[f"<old-{twin}>"] = _fact(gql, bob, fern, "likes", "shade", "2020-01-01T00:00:00Z")
        ids[f"<new-{twin}>"] = _fact(gql, bob, fern, "likes", "light", "2024-01-01T00:00:00Z")
        moss = f"Moss {twin}"
        ids[f"<ret-{twin}>"] = _fact(gql, bob, moss, "grows on", "stone", "2020-01-01T00:00:00Z")
    ids["<foreign-chunk>"] = _import(gql, carol, "# Rose\n\nWater it at dawn.\n")[1]
    ids["<hist>"] = _fact(gql, bob, "Ivy", "needs", "water", "2020-01-01T00:00:00Z")
    ids["<foreign-fact>"] = _fact(gql, carol, "Rose", "needs", "sun", "2020-01-01T00:00:00Z")
    return ids


def _fill(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with the placeholders replaced by the seeded ids."""
    if isinstance(value, str):
        for placeholder, found in ids.items():
            value = value.replace(placeholder, found)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    return value


@asynccontextmanager
async def mcp_client(base_url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client,
    ):
        yield client


def _uncovered(tools: set[str], refusals: list[Refusal]) -> list[tuple[str, Kind]]:
    covered = {(a.tool, a.kind) for a in ANSWERS} | {(r.tool, r.kind) for r in refusals}
    return [
        (tool, kind)
        for tool in sorted(tools)
        for kind in KINDS
        if (tool, kind) not in covered and (tool, kind) not in EXEMPT
    ]


async def test_both_doors_give_the_same_answers_and_the_same_codes(
    live_server_url: str, token: Callable[..., str], tenant: str, gql: Gql
) -> None:
    # Without an agent name, so AGENT is out of reach through either door; not an admin.
    bob, carol = token(tenant, "doors-bob"), token(tenant, "doors-carol")
    refusals = [*REFUSALS, *global_refusals()]
    async with mcp_client(live_server_url, bob) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert _uncovered(tools, refusals) == [], "every MCP tool needs every kind of case"
        assert {a.tool for a in ANSWERS} <= tools, "a case for a tool the server lacks"
        ids = _seed(gql, bob, carol)
        for door in ANSWERS:
            body = gql(_fill(door.query, ids), bob, **_fill(door.variables or {}, ids))
            assert "errors" not in body, (door.name, body)
            result = await client.call_tool(door.tool, _fill(door.arguments, ids))
            assert not result.is_error, (door.name, result.structured_content)
            assert result.structured_content is not None
            via_graphql = door.answer(body["data"])
            assert via_graphql == door.tool_answer(result.structured_content), door.name
            if door.kind == "good":
                assert via_graphql, f"{door.name}: an empty answer proves nothing"
        for r in refusals:
            body = gql(_fill(r.query, ids), bob, **_fill(r.variables or {}, ids))
            graphql_codes = {e["extensions"]["code"] for e in body.get("errors", [])}
            result = await client.call_tool(r.tool, _fill(r.arguments, ids))
            assert result.is_error, r.name
            assert result.structured_content is not None
            mcp_code = result.structured_content["error"]["code"]
            assert graphql_codes == {mcp_code} == {r.code}, (r.name, graphql_codes, mcp_code)
    # Bob's delete of Carol's key answered like a missing key and left it where it was.
    kept = gql(f'{{ memory(scope: USER, key: "{CAROLS_KEY}") {{ value }} }}', carol)
    assert kept["data"]["memory"]["value"] == "Carol's only"
