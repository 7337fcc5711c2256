"""Admission control: a bounded number of requests run at once, a bounded queue waits.

Past what the machine can serve, an unbounded server queues every request until all of them
time out together. This pure ASGI middleware (placed after authentication and the rate limit)
lets ``max_in_flight`` authenticated requests run, queues up to ``max_waiting`` more in arrival
order, and answers anything beyond at once with ``503``, ``Retry-After: 1`` and one
GraphQL-shaped ``UNAVAILABLE`` error naming the limit; nothing of a refused request runs.
Only the routes given are held (``/graphql``, and MCP's POSTs but not its long-lived event
stream); requests without a verified token (health checks, refusals) never are.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping

import orjson
from prometheus_client import Counter, Gauge
from starlette.types import ASGIApp, Receive, Scope, Send

from palimpsest.errors import ErrorCode

IN_FLIGHT = Gauge("palimpsest_requests_in_flight", "Authenticated requests running now")
WAITING = Gauge("palimpsest_requests_waiting", "Authenticated requests waiting for a slot")
SHED = Counter("palimpsest_requests_shed_total", "Requests refused because the server was full")


class Admission:
    """The middleware; ``max_in_flight`` 0 switches it off."""

    def __init__(
        self,
        app: ASGIApp,
        max_in_flight: int,
        max_waiting: int,
        routes: Mapping[str, frozenset[str]],
    ) -> None:
        self.app = app
        self.max_in_flight, self.max_waiting = max_in_flight, max_waiting
        self.routes = routes  # path -> the methods held
        self.running = 0
        self.queue: deque[asyncio.Future[None]] = deque()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = getattr(scope.get("user"), "principal", None)
        if (
            self.max_in_flight <= 0
            or scope["type"] != "http"
            or principal is None
            or scope["method"] not in self.routes.get(scope["path"], ())
        ):
            await self.app(scope, receive, send)
            return
        if self.running >= self.max_in_flight:
            if len(self.queue) >= self.max_waiting:
                SHED.inc()
                await self._refuse(send)
                return
            await self._wait()
        else:
            self.running += 1
        IN_FLIGHT.set(self.running)
        try:
            await self.app(scope, receive, send)
        finally:
            self._release()

    async def _wait(self) -> None:
        """Wait in line; the slot is handed over by ``_release`` (``running`` is unchanged)."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.queue.append(turn)
        WAITING.set(len(self.queue))
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # granted as the client left: pass the slot on
            else:
                self.queue.remove(turn)
            raise
        finally:
            WAITING.set(len(self.queue))

    def _release(self) -> None:
        while self.queue:
            turn = self.queue.popleft()
            if not turn.done():
                turn.set_result(None)  # the slot moves to the next in line
                return
        self.running -= 1
        IN_FLIGHT.set(self.running)

    async def _refuse(self, send: Send) -> None:
        error = {
            "message": f"the server is at capacity ({self.max_in_flight} requests running, "
            f"{self.max_waiting} waiting); retry after 1s",
            "extensions": {
                "code": ErrorCode.UNAVAILABLE.value,
                "limit": "maxInFlight",
                "maxInFlight": self.max_in_flight,
                "maxWaiting": self.max_waiting,
                "retryAfterSeconds": 1,
            },
        }
        body = orjson.dumps({"errors": [error]})
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", b"1"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})
