"""Bounds on MCP's event streams (``GET /mcp``): per principal, in all, and an idle timeout.

A stream lives as long as its client stays and holds a connection and a file descriptor all
that time; admission control does not hold it (it would take a request slot for hours). So
streams are counted here instead: past ``per_principal`` open streams of one principal (tenant,
user, agent of the verified token) the next is ``429 QUOTA_EXCEEDED``, past ``total`` in all
``503 UNAVAILABLE``, each with ``Retry-After: 1`` and one GraphQL-shaped error naming the limit,
as the rate limit and admission control answer. The endpoint is stateless, so a stream carries
little but keep-alive comments: one that carried no message for ``idle_seconds`` is ended, and
a client that wants it reconnects.
"""

from __future__ import annotations

from collections import Counter

import anyio
import orjson
from prometheus_client import Gauge
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from palimpsest.errors import ErrorCode

Key = tuple[str, str | None, str | None]
OPEN = Gauge("palimpsest_mcp_streams_open", "MCP event streams (GET /mcp) open now")


class EventStreams:
    def __init__(self, app: ASGIApp, per_principal: int, total: int, idle_seconds: float) -> None:
        self.app = app
        self.per_principal, self.total, self.idle_seconds = per_principal, total, idle_seconds
        self.open: Counter[Key] = Counter()

    @property
    def open_total(self) -> int:
        return self.open.total()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = getattr(scope.get("user"), "principal", None)
        if scope["type"] != "http" or scope["method"] != "GET" or principal is None:
            await self.app(scope, receive, send)
            return
        key = (principal.tenant_id, principal.user_id, principal.agent_name)
        if self.open[key] >= self.per_principal:
            await _refuse(
                send,
                429,
                ErrorCode.QUOTA_EXCEEDED,
                f"{self.per_principal} MCP event streams are open for this principal "
                "(PALIMPSEST_MCP_MAX_STREAMS_PER_PRINCIPAL); close one first",
                "mcpMaxStreamsPerPrincipal",
                self.per_principal,
            )
            return
        if self.open_total >= self.total:
            await _refuse(
                send,
                503,
                ErrorCode.UNAVAILABLE,
                f"the server has {self.total} MCP event streams open "
                "(PALIMPSEST_MCP_MAX_STREAMS); retry after 1s",
                "mcpMaxStreams",
                self.total,
            )
            return
        self.open[key] += 1
        OPEN.set(self.open_total)
        try:
            await self._until_idle(scope, receive, send)
        finally:
            self.open[key] -= 1
            if self.open[key] <= 0:
                del self.open[key]
            OPEN.set(self.open_total)

    async def _until_idle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = ended = False
        with anyio.CancelScope() as idle:
            idle.deadline = anyio.current_time() + self.idle_seconds

            async def watched(message: Message) -> None:
                nonlocal started, ended
                if message["type"] == "http.response.start":
                    started = True
                elif message["type"] == "http.response.body":
                    ended = not message.get("more_body", False)
                    body = message.get("body", b"")
                    if body and not body.startswith(b":"):  # a message, not a keep-alive comment
                        idle.deadline = anyio.current_time() + self.idle_seconds
                await send(message)

            await self.app(scope, receive, watched)
        if idle.cancelled_caught and started and not ended:
            # The headers went out long ago: end the chunked body, so the client sees a
            # clean end of stream rather than a broken connection.
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _refuse(
    send: Send, status: int, code: ErrorCode, message: str, limit: str, allowed: int
) -> None:
    extensions = {"code": code.value, "limit": limit, "allowed": allowed, "retryAfterSeconds": 1}
    body = orjson.dumps({"errors": [{"message": message, "extensions": extensions}]})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
