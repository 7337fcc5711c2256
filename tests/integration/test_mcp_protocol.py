"""The MCP endpoint follows the newest protocol revision the SDK speaks (the stateless
2026-07-28 envelope, probed with ``server/discover``) and negotiates down to every older one:
a client that only knows the initialize handshake of 2024-11-05 still lists and calls tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import httpx2
import orjson
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
)

SELECT = {"statement": "SELECT 40 + 2 AS n"}
ANSWER = {"columns": ["n"], "rows": [[42]], "truncated": False}


async def test_the_sdk_client_gets_the_newest_revision_and_its_legacy_mode_works(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    headers = {"Authorization": f"Bearer {token(tenant, 'proto-sdk')}"}
    seen: dict[str, str] = {}
    for mode in ("auto", "legacy"):
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(
                streamable_http_client(f"{live_server_url}/mcp", http_client=http), mode=mode
            ) as client,
        ):
            seen[mode] = client.protocol_version
            result = await client.call_tool("sql_query", SELECT)
        assert not result.is_error, (mode, result.structured_content)
        assert result.structured_content == ANSWER, mode
    assert seen == {"auto": LATEST_MODERN_VERSION, "legacy": LATEST_HANDSHAKE_VERSION}


def _rpc(url: str, token: str, method: str, params: Any, version: str | None) -> Any:
    headers = {
        "Authorization": f"Bearer {token}",
        "accept": "application/json, text/event-stream",
    }
    if version is not None:
        headers["mcp-protocol-version"] = version
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = httpx.post(f"{url}/mcp", headers=headers, json=body, timeout=60)
    assert response.status_code == 200, (method, version, response.text)
    return response.json()


@pytest.mark.parametrize("offered", [*HANDSHAKE_PROTOCOL_VERSIONS, "1999-01-01"])
def test_an_older_client_revision_is_answered_in_its_own_revision(
    live_server_url: str, token: Callable[..., str], tenant: str, offered: str
) -> None:
    run = token(tenant, "proto-old")
    hello = {
        "protocolVersion": offered,
        "capabilities": {},
        "clientInfo": {"name": "an-old-client", "version": "0.1"},
    }
    agreed = _rpc(live_server_url, run, "initialize", hello, None)["result"]["protocolVersion"]
    # A revision the server knows is kept; one it does not gets its newest handshake revision.
    assert agreed == (
        offered if offered in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    )
    listed = _rpc(live_server_url, run, "tools/list", {}, agreed)["result"]["tools"]
    assert "sql_query" in {t["name"] for t in listed}
    called = _rpc(
        live_server_url, run, "tools/call", {"name": "sql_query", "arguments": SELECT}, agreed
    )["result"]
    assert called["isError"] is False
    # A client from before structured results (2025-06-18) reads the same answer as text.
    assert orjson.loads(called["content"][0]["text"]) == ANSWER
    assert called["structuredContent"] == ANSWER
