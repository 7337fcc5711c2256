"""The doors outside GraphQL's own limits: MCP's event streams, its refusals and body cap,
JSON-RPC errors on both transports, and the rate limit of requests without a token."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys
from palimpsest.server import serve_in_thread
from palimpsest_suites.attack import probe_doors

IDLE = 1.5


async def test_every_door_holds_on_a_server_with_small_limits(
    settings: Settings, tenant: str
) -> None:
    tight = settings.replace(
        mcp_max_streams_per_principal=2,
        mcp_max_streams=5,
        mcp_stream_idle_seconds=IDLE,
        anonymous_rate_limit_per_second=2.0,
        anonymous_rate_limit_burst=10,
    )
    with serve_in_thread(tight) as url:
        results = await probe_doors.run(
            url, load_keys(settings), (tenant, f"{tenant}-b"), stream_idle_seconds=IDLE
        )
    assert {name: r["passed"] for name, r in results.items()} == dict.fromkeys(results, True)
    assert set(results) == {
        "mcpStreamsPerPrincipal",
        "mcpStreamsTotal",
        "mcpStreamIdle",
        "anonymousRateLimit",
        "mcpCodedErrors",
        "mcpDocumentLimit",
    }
    assert results["mcpStreamsPerPrincipal"]["accepted"] == 2
    assert results["mcpStreamsTotal"]["accepted"] == 5
    assert results["anonymousRateLimit"]["sent"] <= 40  # refused soon after the burst of 10


def test_an_mcp_body_over_the_request_limit_is_a_coded_413(
    live_server_url: str, settings: Settings, token: Callable[..., str], tenant: str
) -> None:
    headers = {
        "Authorization": f"Bearer {token(tenant, 'door-user')}",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    body = b" " * (settings.limits.max_request_bytes + 1)
    response = httpx.post(f"{live_server_url}/mcp", content=body, headers=headers, timeout=60)
    assert response.status_code == 413
    reply = response.json()
    assert reply["id"] is None
    assert reply["error"]["data"] == {
        "code": "INVALID_ARGUMENT",
        "limit": "maxRequestBytes",
        "allowed": settings.limits.max_request_bytes,
    }


def test_stdio_answers_every_line_it_cannot_serve(token: Callable[..., str], tenant: str) -> None:
    lines = [
        b"garbage",
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
        b"[1]",
        b'{"jsonrpc":"2.0","id":7,"method":"ping"}',
    ]
    # PYTHONPATH too: the server must run the sources under test, as pytest does.
    kept = ("HOME", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k.startswith("PALIMPSEST_") or k in kept}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), "mcp"],
        env={**env, "PALIMPSEST_RUN_TOKEN": token(tenant, "stdio-door")},
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (None, -32700),
        (None, -32600),
        (None, -32600),
        (None, -32600),
        (None, -32600),
        (7, None),
    ]
    assert all(a["error"]["data"]["code"] == "INVALID_ARGUMENT" for a in answers[:5])
