"""/mcp's edge: coded JSON-RPC refusals, the body cap, and bounded event streams (fake apps)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import orjson
import pytest
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from palimpsest.mcp.edge import McpEdge, recode
from palimpsest.mcp.streams import EventStreams
from palimpsest.middleware.auth import AuthenticatedCaller
from tests.unit.principals import principal


def _caller(tenant: str, user: str) -> AuthenticatedCaller:
    return AuthenticatedCaller(principal(tenant_id=tenant, user_id=user))


def _scope(method: str, body_length: int | None = None, user: Any = None) -> Scope:
    headers = [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/json")]
    if body_length is not None:
        headers.append((b"content-length", str(body_length).encode()))
    return {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "headers": headers,
        "query_string": b"",
        "user": user or _caller("acme", "alice"),
    }


async def _call(app: ASGIApp, scope: Scope, body: bytes = b"") -> tuple[int, Any, list[Message]]:
    sent: list[Message] = []
    chunks = [body]

    async def receive() -> Message:
        if chunks:
            return {"type": "http.request", "body": chunks.pop(), "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = int(sent[0]["status"])
    payload = b"".join(m.get("body", b"") for m in sent[1:])
    json = (b"content-type", b"application/json") in sent[0]["headers"]
    return status, orjson.loads(payload) if json else payload, sent


def _inner(response: Response, seen: list[bytes]) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        seen.append(message.get("body", b""))
        await response(scope, receive, send)

    return app


@pytest.mark.parametrize(
    ("status", "code"), [(400, "INVALID_ARGUMENT"), (403, "FORBIDDEN"), (421, "FORBIDDEN")]
)
def test_plain_text_refusals_become_coded_json_rpc_errors(status: int, code: str) -> None:
    body = orjson.loads(recode(status, b"Invalid Host header"))
    assert body["id"] is None
    assert body["error"]["message"] == "Invalid Host header"
    assert body["error"]["data"] == {"code": code}


def test_the_sdks_json_rpc_errors_gain_a_code_and_keep_theirs() -> None:
    sdk = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Not Acceptable"}}'
    body = orjson.loads(recode(406, sdk))
    assert body["error"]["code"] == -32600
    assert body["error"]["data"] == {"code": "INVALID_ARGUMENT"}
    failed = orjson.loads(recode(500, b"Internal Server Error"))
    assert (failed["error"]["code"], failed["error"]["data"]["code"]) == (-32603, "INTERNAL")


async def test_the_edge_codes_what_the_sdk_answers_and_leaves_success_alone() -> None:
    seen: list[bytes] = []
    refusing = McpEdge(_inner(PlainTextResponse("nope", 405), seen), 1024, None)
    status, body, sent = await _call(refusing, _scope("PUT"))
    assert status == 405
    assert body["error"]["data"]["code"] == "INVALID_ARGUMENT"
    assert (b"content-type", b"application/json") in sent[0]["headers"]
    ok = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    passing = McpEdge(_inner(Response(ok, 200, media_type="application/json"), seen), 1024, None)
    call = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    status, body, _ = await _call(passing, _scope("POST", len(call)), call)
    assert (status, body) == (200, orjson.loads(ok))
    assert seen[-1] == call  # the body read by the edge reached the SDK whole


async def test_bodies_over_the_cap_and_bad_ids_never_reach_the_sdk() -> None:
    seen: list[bytes] = []
    edge = McpEdge(_inner(Response(b"{}", 200), seen), 64, None)
    status, body, _ = await _call(edge, _scope("POST", 65), b"x" * 65)
    assert status == 413
    assert body["error"]["data"] == {
        "code": "INVALID_ARGUMENT",
        "limit": "maxRequestBytes",
        "allowed": 64,
    }
    undeclared = await _call(edge, _scope("POST"), b"x" * 65)  # streamed, no length given
    assert undeclared[0] == 413
    bad_id = b'{"jsonrpc":"2.0","id":{},"method":"ping"}'
    status, body, _ = await _call(edge, _scope("POST", len(bad_id)), bad_id)
    assert (status, body["id"], body["error"]["code"]) == (400, None, -32600)
    assert seen == []


Opened = Callable[[], Awaitable[tuple[int, Any]]]


def _stream_app(messages: list[bytes]) -> ASGIApp:
    """An event stream that sends ``messages`` (one per 50 ms), then only keep-alives."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for m in messages:
            await anyio.sleep(0.05)
            await send({"type": "http.response.body", "body": m, "more_body": True})
        while True:
            await anyio.sleep(0.05)
            await send({"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True})

    return app


async def test_streams_are_capped_per_principal_then_in_all() -> None:
    streams = EventStreams(_stream_app([]), per_principal=2, total=3, idle_seconds=60)
    answers: list[tuple[int, Any]] = []
    async with anyio.create_task_group() as tg:
        for user in ("alice", "alice"):
            tg.start_soon(_call, streams, _scope("GET", user=_caller("acme", user)))
        await anyio.sleep(0.05)
        refused = await _call(streams, _scope("GET", user=_caller("acme", "alice")))
        answers.append(refused[:2])
        tg.start_soon(_call, streams, _scope("GET", user=_caller("acme", "bob")))
        await anyio.sleep(0.05)
        answers.append((await _call(streams, _scope("GET", user=_caller("other", "carol"))))[:2])
        assert streams.open_total == 3
        tg.cancel_scope.cancel()  # the clients leave
    assert streams.open_total == 0
    [(s429, per), (s503, total)] = answers
    assert s429 == 429
    assert per["errors"][0]["extensions"]["code"] == "QUOTA_EXCEEDED"
    assert per["errors"][0]["extensions"]["limit"] == "mcpMaxStreamsPerPrincipal"
    assert s503 == 503
    assert total["errors"][0]["extensions"]["code"] == "UNAVAILABLE"
    assert total["errors"][0]["extensions"]["limit"] == "mcpMaxStreams"
    # Room again once streams closed; POSTs are never counted.
    with anyio.move_on_after(0.1):
        await _call(streams, _scope("GET"))
    assert streams.open_total == 0


async def test_a_stream_that_carries_nothing_is_ended_after_the_idle_time() -> None:
    streams = EventStreams(_stream_app([b"data: 1\n\n"] * 4), 1, 1, idle_seconds=0.3)
    started = anyio.current_time()
    with anyio.fail_after(5):
        status, _, sent = await _call(streams, _scope("GET"))
    lasted = anyio.current_time() - started
    assert status == 200
    # Four messages kept it open (0.2 s), then keep-alives alone did not.
    assert 0.45 < lasted < 2
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert streams.open_total == 0
