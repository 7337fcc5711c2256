"""The MCP server driven by the official SDK's own client, over streamable HTTP and stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from palimpsest.identity import Scope
from tests.integration.conftest import Gql

TOOLS = {
    "remember",
    "memory_get",
    "memory_delete",
    "memory_history",
    "document_get",
    "chunk_update",
    "fact_history",
    "supersede_fact",
    "retract_fact",
    "pending_work",
    "document_history",
    "document_revision",
    "document_diff",
    "restore_document",
    "recall",
    "search",
    "import_document",
    "assert_facts",
    "facts",
    "harvest",
    "sql_query",
    "sql_exec",
}


@asynccontextmanager
async def http_client(base_url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client,
    ):
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert result.structured_content is not None, result.content
    assert not result.is_error, result.structured_content
    body: dict[str, Any] = result.structured_content
    return body


async def test_tools_are_listed_with_schemas_and_descriptions(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    async with http_client(live_server_url, token(tenant, "alice", "planner")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= TOOLS
    for name in TOOLS:
        assert len(tools[name].description or "") > 40, name
        assert tools[name].input_schema["type"] == "object"
    remember = tools["remember"].input_schema
    assert remember["required"] == ["key", "value"]
    assert remember["properties"]["scope"]["default"] == "USER"


READ_ONLY = {
    "context",
    "memory_get",
    "memory_history",
    "recall",
    "search",
    "document_get",
    "document_history",
    "document_revision",
    "document_diff",
    "facts",
    "fact_history",
    "pending_work",
    "sql_query",
}
# Writes that can replace or end what a later read answers (history keeps the old version).
DESTRUCTIVE = {
    "remember",
    "memory_delete",
    "memory",  # the file tool: delete, rename and str_replace end what a view shows
    "import_document",
    "chunk_update",
    "restore_document",
    "assert_facts",
    "supersede_fact",
    "retract_fact",
    "sql_exec",
}


async def test_every_tool_states_its_hints_and_an_output_schema(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    async with http_client(live_server_url, token(tenant, "hints-mcp")) as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools} >= TOOLS
    for t in tools:
        hints = t.annotations
        assert hints is not None, t.name
        stated = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        assert None not in stated, t.name
        assert hints.read_only_hint is (t.name in READ_ONLY), t.name
        assert hints.destructive_hint is (t.name in DESTRUCTIVE), t.name
        if hints.read_only_hint:
            assert hints.idempotent_hint is True, t.name
        schema = t.output_schema
        assert schema is not None, t.name
        assert schema["type"] == "object", t.name
        assert schema["required"], t.name
        assert set(schema["required"]) <= set(schema["properties"]), t.name


async def test_remember_then_recall_over_http_reads_like_graphql(
    live_server_url: str, token: Callable[..., str], tenant: str, gql: Gql
) -> None:
    alice = token(tenant, "alice-mcp", "planner")
    async with http_client(live_server_url, alice) as client:
        saved = await call(client, "remember", key="prefs/editor", value={"editor": "helix"})
        found = await call(client, "recall", query="which editor does the user prefer?")
    assert saved["entry"]["key"] == "prefs/editor"
    assert saved["entry"]["provenance"]["agent_name"] == "planner"  # stamped from the token
    keys = [h.get("key") for h in found["hits"] if h["kind"] == "notes"]
    assert "prefs/editor" in keys
    assert found["scopes"] == ["USER"]
    # The same resolver behind GraphQL: the entry is there, owned by the token's user.
    body = gql('{ memory(scope: USER, key: "prefs/editor") { value } }', alice)
    assert body["data"]["memory"]["value"] == {"editor": "helix"}


async def test_scope_rules_and_error_codes_are_those_of_graphql(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    async with http_client(live_server_url, token(tenant, "bob-mcp")) as client:
        no_agent = await client.call_tool(
            "remember", {"key": "k", "value": 1, "scope": Scope.AGENT.value}
        )
        null_value = await client.call_tool("remember", {"key": "k", "value": None})
        bad_top_k = await client.call_tool("recall", {"query": "x", "top_k": 0})
        sql_tenant = await client.call_tool(
            "sql_query", {"statement": "SELECT 1", "scope": "TENANT"}
        )
        mine = await call(client, "remember", key="secret", value="bob's only")
    assert no_agent.is_error
    assert no_agent.structured_content is not None
    assert no_agent.structured_content["error"]["code"] == "FORBIDDEN"
    assert no_agent.content[0].text.startswith("FORBIDDEN: ")  # type: ignore[union-attr]
    assert null_value.structured_content["error"]["code"] == "INVALID_ARGUMENT"
    top_k_error = bad_top_k.structured_content["error"]
    assert top_k_error["code"] == "INVALID_ARGUMENT"
    assert top_k_error["fields"] == ["top_k"]
    assert sql_tenant.structured_content["error"]["code"] == "FORBIDDEN"
    assert mine["entry"]["key"] == "secret"
    # Another user of the same tenant never sees it, not even as a different answer.
    async with http_client(live_server_url, token(tenant, "carol-mcp")) as client:
        found = await call(client, "search", query="bob's only", sources=["notes"])
    assert [h for h in found["hits"] if h.get("key") == "secret"] == []


async def test_documents_facts_and_sql_tools(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    async with http_client(live_server_url, token(tenant, "dana-mcp", "scribe")) as client:
        doc = await call(
            client,
            "import_document",
            markdown="# Trip\n\nThe ferry to Hydra leaves at 7:40 from Piraeus gate E8.\n",
            path="/notes/trip.md",
        )
        hits = await call(client, "search", query="ferry departure gate", sources=["documents"])
        asserted = await call(
            client,
            "assert_facts",
            facts=[
                {
                    "subject": {"type": "person", "name": "Dana"},
                    "predicate": "lives in",
                    "object": {"type": "city", "name": "Lisbon"},
                    "valid_at": "2020",
                }
            ],
            place=False,
        )
        before = await call(
            client, "facts", subject={"type": "person", "name": "dana"}, as_of="2019-06-01"
        )
        after = await call(client, "facts", subject={"type": "person", "name": "dana"})
        await call(
            client,
            "sql_exec",
            statements=[
                {"statement": "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)"},
                {"statement": "INSERT INTO t (body) VALUES (?)", "args": ["hello"]},
            ],
        )
        rows = await call(
            client, "sql_query", statement="SELECT body FROM t WHERE id = :i", args={"i": 1}
        )
    assert doc["chunk_count"] == 2
    assert any(h.get("document_id") == doc["id"] for h in hits["hits"])
    assert asserted["results"][0]["created"] is True
    assert before["facts"] == []
    assert [f["text"] for f in after["facts"]] == [asserted["results"][0]["fact"]["text"]]
    assert rows == {"columns": ["body"], "rows": [["hello"]], "truncated": False}


def test_http_without_a_verified_token_is_refused_before_parsing(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    missing = httpx.post(f"{live_server_url}/mcp", json=request)
    assert missing.status_code == 401
    assert missing.json()["error"]["data"]["code"] == "UNAUTHENTICATED"
    garbage = httpx.post(
        f"{live_server_url}/mcp", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert garbage.status_code == 401  # refused before the body is read
    expired = token(tenant, "alice", ttl=1)
    forged = expired[:-4] + ("AAAA" if not expired.endswith("AAAA") else "BBBB")
    bad = httpx.post(
        f"{live_server_url}/mcp", json=request, headers={"Authorization": f"Bearer {forged}"}
    )
    assert bad.status_code == 401
    assert bad.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


def _stdio(run_token: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k.startswith("PALIMPSEST_") or k == "HOME"}
    return StdioServerParameters(
        command=str(Path(sys.executable).parent / "palimpsest"),
        args=["mcp"],
        env={**env, "PALIMPSEST_RUN_TOKEN": run_token},
    )


async def test_remember_then_recall_over_stdio(token: Callable[..., str], tenant: str) -> None:
    async with Client(_stdio(token(tenant, "erin-mcp", "planner"))) as client:
        saved = await call(client, "remember", key="pets/cat", value="Miso, a grey tabby")
        found = await call(client, "recall", query="what is the cat called?")
        denied = await client.call_tool("remember", {"key": "k", "value": 1, "scope": "GLOBAL"})
    assert saved["entry"]["key"] == "pets/cat"
    assert any(h.get("key") == "pets/cat" for h in found["hits"])
    assert denied.structured_content["error"]["code"] == "FORBIDDEN"


def test_stdio_without_a_token_says_what_to_set() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PALIMPSEST_RUN_TOKEN"}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), "mcp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert "PALIMPSEST_RUN_TOKEN" in done.stderr
    assert done.stdout == ""  # stdout is reserved for the protocol


async def test_harvest_banks_spans_once_in_the_users_queue(
    live_server_url: str, token: Callable[..., str], tenant: str, gql: Gql
) -> None:
    span = {"text": "I moved to Porto last spring.", "speaker": "Erin", "source_id": "s-1"}
    erin = token(tenant, "erin-mcp", "scribe")
    async with http_client(live_server_url, erin) as client:
        first = await call(client, "harvest", spans=[span], compaction_generation=1)
        again = await call(client, "harvest", spans=[span], compaction_generation=1)
        empty = await client.call_tool("harvest", {"spans": [], "compaction_generation": 1})
    pending = gql("{ pendingWork { queued leased done dead } }", token=erin)
    assert (first["receipt"]["accepted"], again["receipt"]["accepted"]) == (1, 0)
    assert again["receipt"]["duplicates"] == 1
    assert again["receipt"]["span_ids"] == first["receipt"]["span_ids"]
    assert empty.is_error
    assert empty.structured_content["error"]["code"] == "INVALID_ARGUMENT"
    work = pending["data"]["pendingWork"]
    assert work["queued"] + work["leased"] + work["done"] == 1


def test_the_reference_pages_example_runs(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    page = (Path(__file__).parents[2] / "docs" / "reference" / "mcp.md").read_text()
    script = page.split("```python\n", 1)[1].split("```", 1)[0]
    env = {
        **os.environ,
        "PALIMPSEST_SERVER_URL": live_server_url,
        "PALIMPSEST_RUN_TOKEN": token(tenant, "docs-mcp"),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "protocol 2026-07-28"
    assert "memory_delete writes" in lines
    assert "memory_get read-only" in lines
    assert lines[-3:] == ["value {'editor': 'helix'}", "deleted [True, False]", "refused FORBIDDEN"]
