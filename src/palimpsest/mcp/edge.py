"""The checks in front of the SDK's ``/mcp`` handler, and one shape for everything it refuses.

In order, for a request the token middleware verified:

1. Host and Origin (DNS rebinding, on loopback) and, for a POST, the JSON content type: the
   SDK's own checks, run here first so that nothing of a refused request's body is read;
2. the body's size: over ``max_request_bytes`` (``PALIMPSEST_MAX_REQUEST_BYTES``, the limit
   of ``/graphql`` too, well above the largest document a tool accepts) 413;
3. the body itself (``jsonrpc.triage``): what the SDK would leave unanswered is 400.

Every error response of the endpoint, these and the SDK's own (plain text or JSON-RPC without
a code), leaves as one JSON-RPC error with ``id: null`` and ``error.data.code``, the
Palimpsest code, so an MCP client surfaces it as the answer to its request.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import orjson
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from palimpsest.errors import ErrorCode
from palimpsest.mcp import jsonrpc
from palimpsest.middleware.replay import replay

_CODES = {
    403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND,
    421: ErrorCode.FORBIDDEN,  # a Host header this server does not answer to
    429: ErrorCode.QUOTA_EXCEEDED,
    503: ErrorCode.UNAVAILABLE,
}


def code_of(status: int) -> ErrorCode:
    fallback = ErrorCode.INTERNAL if status >= 500 else ErrorCode.INVALID_ARGUMENT
    return _CODES.get(status, fallback)


class McpEdge:
    def __init__(
        self, app: ASGIApp, max_body_bytes: int, security: TransportSecuritySettings | None
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = coded(send)
        request = Request(scope, receive)
        post = scope["method"] == "POST"
        refused = await self.security.validate_request(request, is_post=post)
        if refused is not None:
            await refused(scope, receive, send)
            return
        if post:
            body = await self._read_body(request)
            problem = (
                jsonrpc.triage(body)
                if body is not None
                else jsonrpc.error(
                    INVALID_REQUEST,
                    f"the request body is over {self.max_body_bytes} bytes "
                    "(PALIMPSEST_MAX_REQUEST_BYTES)",
                    ErrorCode.INVALID_ARGUMENT,
                    limit="maxRequestBytes",
                    allowed=self.max_body_bytes,
                )
            )
            if problem is not None:
                await _answer(send, 400 if body is not None else 413, jsonrpc.encode(problem))
                return
            receive = replay(body or b"", receive)
        await self.app(scope, receive, send)

    async def _read_body(self, request: Request) -> bytes | None:
        """The whole body, or None as soon as it is known to be over the limit."""
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and (len(declared) > 18 or int(declared) > self.max_body_bytes):
            return None
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
        return b"".join(chunks)


def coded(send: Send) -> Send:
    """``send``, with every error response (status >= 400) rewritten as a coded JSON-RPC error."""
    start: Message | None = None
    chunks: list[bytes] = []

    async def rewrite(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start" and int(message["status"]) >= 400:
            start = message
            return
        if start is None or message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        status = int(start["status"])
        body = recode(status, b"".join(chunks))
        kept = [(k, v) for k, v in start.get("headers", []) if k.lower() not in _REPLACED]
        await _answer(send, status, body, kept)

    return rewrite


_REPLACED = (b"content-length", b"content-type")


def recode(status: int, body: bytes) -> bytes:
    """A JSON-RPC error body with ``error.data.code``, from whatever an error response held."""
    code = code_of(status).value
    try:
        value: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        data = value["error"].get("data")
        if isinstance(data, dict):
            data.setdefault("code", code)
        else:
            value["error"]["data"] = (
                {"code": code} if data is None else {"code": code, "detail": data}
            )
        return orjson.dumps(value)
    text = body.decode(errors="replace").strip()
    message = text if text and value is None else _phrase(status)
    rpc_code = INTERNAL_ERROR if status >= 500 else INVALID_REQUEST
    return jsonrpc.encode(jsonrpc.error(rpc_code, message, code_of(status)))


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"


async def _answer(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [
        *(headers or []),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
