"""The doors probe: what the server's HTTP edge bounds outside GraphQL's own limits.

Against a running server, each case says whether the door holds and what it measured:

- ``mcpStreamsPerPrincipal``/``mcpStreamsTotal``: ``GET /mcp`` event streams are refused past
  a cap per principal (429 ``QUOTA_EXCEEDED``) and in all (503 ``UNAVAILABLE``), with
  ``extensions.limit``; every stream opened is closed again before the case ends;
- ``mcpStreamIdle`` (only when ``stream_idle_seconds`` is given): the server ends a stream that
  carried nothing for that long;
- ``anonymousRateLimit``: tokenless requests from one address are refused with 429,
  ``Retry-After`` and ``limit: anonymousRateLimit``, while a member is still served; the case
  then waits (at most 30 s) for the bucket to fill again, so later probes are not refused;
- ``mcpCodedErrors``: every refusal of ``/mcp`` (method, content type, Host, Origin, not JSON,
  ids that are not strings or integers, a batch) is a JSON-RPC error with ``id: null`` and
  ``error.data.code``, the JSON-RPC code the spec asks for;
- ``mcpDocumentLimit``: a body holding a document one byte over the documented limit reaches
  the tool, which names the limit; the transport does not refuse it first.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from typing import Any

import httpx

from palimpsest.domain.documents.markdown import MAX_DOCUMENT_BYTES
from palimpsest.identity.tokens import TokenKeys, mint

MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
MAX_STREAMS_TRIED = 400
MAX_ANONYMOUS_TRIED = 2000
MAX_REFILL_WAIT = 30.0


async def run(
    url: str,
    keys: TokenKeys,
    tenants: tuple[str, str],
    stream_idle_seconds: float | None = None,
) -> dict[str, dict[str, Any]]:
    def token(tenant: str, user: str) -> str:
        return mint(keys, tenant=tenant, user=user, agent="doors")

    tag = secrets.token_hex(3)
    results: dict[str, dict[str, Any]] = {}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        member = token(tenants[0], f"doors-{tag}")
        results.update(await _streams(url, lambda i: token(tenants[i % 2], f"s{tag}-{i}")))
        if stream_idle_seconds is not None:
            results["mcpStreamIdle"] = await _idle(url, member, stream_idle_seconds)
        results["anonymousRateLimit"] = await _anonymous(client, member)
        results["mcpCodedErrors"] = await _coded(client, member)
        results["mcpDocumentLimit"] = await _document_limit(client, member)
    return results


async def _open(stack: contextlib.AsyncExitStack, client: httpx.AsyncClient) -> httpx.Response:
    request = client.build_request("GET", "/mcp", headers={"accept": "text/event-stream"})
    response = await client.send(request, stream=True)
    stack.push_async_callback(response.aclose)
    if response.status_code >= 400:
        await response.aread()
    return response


def _limit(response: httpx.Response) -> tuple[str | None, str | None]:
    try:
        [error] = response.json()["errors"]
        ext = error["extensions"]
        return ext.get("code"), ext.get("limit")
    except (ValueError, KeyError, TypeError):
        return None, None


async def _streams(url: str, token_of: Any) -> dict[str, dict[str, Any]]:
    per: dict[str, Any] = {"passed": False, "accepted": 0}
    total: dict[str, Any] = {"passed": False, "accepted": 0, "principals": 0}
    async with contextlib.AsyncExitStack() as stack:
        clients: list[httpx.AsyncClient] = []

        async def client_for(i: int) -> httpx.AsyncClient:
            headers = {"Authorization": f"Bearer {token_of(i)}"}
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
            c = httpx.AsyncClient(base_url=url, headers=headers, timeout=30, limits=limits)
            await stack.enter_async_context(c)
            clients.append(c)
            return c

        first = await client_for(0)
        cap = 0
        while cap < MAX_STREAMS_TRIED:
            response = await _open(stack, first)
            if response.status_code != 200:
                code, limit = _limit(response)
                per["status"], per["code"], per["limit"] = response.status_code, code, limit
                per["retry_after"] = response.headers.get("retry-after")
                per["passed"] = (response.status_code, code, limit) == (
                    429,
                    "QUOTA_EXCEEDED",
                    "mcpMaxStreamsPerPrincipal",
                ) and per["retry_after"] is not None
                break
            cap += 1
        per["accepted"] = opened = cap
        principal = 1
        while cap and opened < MAX_STREAMS_TRIED:
            c = await client_for(principal)
            principal += 1
            refused: httpx.Response | None = None
            for _ in range(cap):
                response = await _open(stack, c)
                if response.status_code != 200:
                    refused = response
                    break
                opened += 1
            if refused is not None:
                code, limit = _limit(refused)
                total["status"], total["code"], total["limit"] = refused.status_code, code, limit
                total["passed"] = (refused.status_code, code, limit) == (
                    503,
                    "UNAVAILABLE",
                    "mcpMaxStreams",
                )
                break
        total["accepted"], total["principals"] = opened, principal
    return {"mcpStreamsPerPrincipal": per, "mcpStreamsTotal": total}


async def _idle(url: str, member: str, idle: float) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {member}", "accept": "text/event-stream"}
    started = time.perf_counter()
    async with (
        httpx.AsyncClient(base_url=url, timeout=idle + 30) as client,
        client.stream("GET", "/mcp", headers=headers) as response,
    ):
        status = response.status_code
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(idle + 10):
                async for _ in response.aiter_bytes():
                    pass
    seconds = time.perf_counter() - started
    return {"passed": status == 200 and seconds < idle + 10, "seconds": round(seconds, 2)}


async def _anonymous(client: httpx.AsyncClient, member: str) -> dict[str, Any]:
    body = {"query": "{ __typename }"}
    sent = 0
    refused: httpx.Response | None = None
    started = time.perf_counter()
    while refused is None and sent < MAX_ANONYMOUS_TRIED:
        replies = await asyncio.gather(*(client.post("/graphql", json=body) for _ in range(20)))
        sent += len(replies)
        refused = next((r for r in replies if r.status_code == 429), None)
    figures: dict[str, Any] = {"passed": False, "sent": sent}
    figures["seconds"] = round(time.perf_counter() - started, 2)
    if refused is None:
        return figures
    code, limit = _limit(refused)
    ext = refused.json()["errors"][0]["extensions"]
    t0 = time.perf_counter()
    me = await client.post(
        "/graphql",
        json={"query": "{ me { tenant } }"},
        headers={"Authorization": f"Bearer {member}"},
    )
    figures["member_seconds"] = round(time.perf_counter() - t0, 3)
    health = await client.get("/healthz")
    figures.update(code=code, limit=limit, retry_after=refused.headers.get("retry-after"))
    figures["passed"] = (
        (code, limit) == ("QUOTA_EXCEEDED", "anonymousRateLimit")
        and refused.headers.get("retry-after", "").isdigit()
        and me.status_code == 200
        and health.status_code == 200
    )
    # Let the address's bucket fill again, so that what runs next is not refused.
    await asyncio.sleep(min(MAX_REFILL_WAIT, ext["burst"] / ext["ratePerSecond"]))
    return figures


BAD_MCP: dict[str, tuple[str, bytes, dict[str, str], int]] = {
    "put": ("PUT", b"{}", {}, 0),
    "contentType": ("POST", b"{}", {"content-type": "text/plain"}, 0),
    "host": ("POST", b"{}", {"host": "attacker.example"}, 0),
    "origin": ("POST", b"{}", {"origin": "http://attacker.example"}, 0),
    "garbage": ("POST", b"not json", {}, -32700),
    "objectId": ("POST", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', {}, -32600),
    "floatId": ("POST", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', {}, -32600),
    "nanId": ("POST", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}', {}, -32600),
    "nullId": ("POST", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', {}, -32600),
    "batch": ("POST", b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', {}, -32600),
}


async def _coded(client: httpx.AsyncClient, member: str) -> dict[str, Any]:
    uncoded: list[str] = []
    for name, (method, body, extra, rpc_code) in BAD_MCP.items():
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {member}", **extra}
        response = await client.request(method, "/mcp", content=body, headers=headers)
        try:
            reply = response.json()
            error = reply["error"]
            coded = (
                response.status_code >= 400
                and reply["id"] is None
                and isinstance(error["data"]["code"], str)
                and (rpc_code == 0 or error["code"] == rpc_code)
            )
        except (ValueError, KeyError, TypeError):
            coded = False
        if not coded:
            uncoded.append(f"{name}:{response.status_code}")
    return {"passed": not uncoded, "cases": len(BAD_MCP), "uncoded": uncoded}


async def _document_limit(client: httpx.AsyncClient, member: str) -> dict[str, Any]:
    markdown = "# Big\n\n" + "x" * (MAX_DOCUMENT_BYTES - 6)  # one byte over the limit
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "import_document", "arguments": {"markdown": markdown}},
    }
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {member}"}
    started = time.perf_counter()
    response = await client.post("/mcp", json=call, headers=headers)
    figures: dict[str, Any] = {"status": response.status_code}
    figures["seconds"] = round(time.perf_counter() - started, 2)
    try:
        error = response.json()["result"]["structuredContent"]["error"]
        # The tool's own refusal, naming the limit (the transport would answer 413 instead).
        reached = (
            error["code"] == "INVALID_ARGUMENT" and str(MAX_DOCUMENT_BYTES) in error["message"]
        )
    except (ValueError, KeyError, TypeError):
        reached = False
    figures["passed"] = response.status_code == 200 and reached
    return figures
