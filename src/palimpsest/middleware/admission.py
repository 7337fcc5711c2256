"""Admission control: a bounded number of requests run at once, a bounded queue waits.

Past what the machine can serve, an unbounded server queues every request until all of them
time out together. This pure ASGI middleware (placed after authentication and the rate limit)
lets ``max_in_flight`` authenticated requests run, queues up to ``max_waiting`` more in arrival
order, and answers anything beyond at once with ``503``, ``Retry-After: 1`` and one
GraphQL-shaped ``UNAVAILABLE`` error naming the limit; nothing of a refused request runs.

No caller can take the server for itself: one principal (tenant, user and agent of the
verified token) runs at most ``max_in_flight_per_principal`` requests at once, and its others
wait behind them, at most ``max_waiting_per_principal``; a slot that frees goes to the first
waiter whose principal is under its share. And no request holds a slot for longer than
``hold_seconds``: past it the request is stopped (a write in flight rolls back) and answered
with ``UNAVAILABLE`` (``limit: requestTimeout``) if nothing of its response was sent yet.

Only the routes given are held (``/graphql``, and MCP's POSTs but not its long-lived event
stream); requests without a verified token (health checks, refusals) never are.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from prometheus_client import Counter as Metric
from prometheus_client import Gauge
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from palimpsest.errors import ErrorCode

IN_FLIGHT = Gauge("palimpsest_requests_in_flight", "Authenticated requests running now")
WAITING = Gauge("palimpsest_requests_waiting", "Authenticated requests waiting for a slot")
SHED = Metric("palimpsest_requests_shed_total", "Requests refused because the server was full")
STOPPED = Metric("palimpsest_requests_stopped_total", "Requests stopped after holding a slot")

Who = tuple[str, str | None, str | None]


@dataclass(frozen=True, slots=True)
class Limits:
    max_in_flight: int
    max_waiting: int
    max_in_flight_per_principal: int
    max_waiting_per_principal: int
    hold_seconds: float


@dataclass(slots=True)
class _Turn:
    who: Who
    granted: asyncio.Future[None]


class Admission:
    """The middleware; ``max_in_flight`` 0 switches it off."""

    def __init__(self, app: ASGIApp, limits: Limits, routes: Mapping[str, frozenset[str]]) -> None:
        self.app = app
        self.limits = limits
        self.routes = routes  # path -> the methods held
        self.running = 0
        self.running_by: Counter[Who] = Counter()
        self.waiting_by: Counter[Who] = Counter()
        self.queue: deque[_Turn] = deque()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = getattr(scope.get("user"), "principal", None)
        if (
            self.limits.max_in_flight <= 0
            or scope["type"] != "http"
            or principal is None
            or scope["method"] not in self.routes.get(scope["path"], ())
        ):
            await self.app(scope, receive, send)
            return
        who: Who = (principal.tenant_id, principal.user_id, principal.agent_name)
        if self._may_run(who):
            self.running += 1
            self.running_by[who] += 1
        else:
            if refusal := self._refusal(who):
                SHED.inc()
                await _answer(send, refusal)
                return
            await self._wait(who)
        IN_FLIGHT.set(self.running)
        try:
            await self._hold(scope, receive, send)
        finally:
            self._release(who)

    def _may_run(self, who: Who) -> bool:
        return (
            self.running < self.limits.max_in_flight
            and self.running_by[who] < self.limits.max_in_flight_per_principal
        )

    def _refusal(self, who: Who) -> dict[str, Any] | None:
        lim = self.limits
        if self.waiting_by[who] >= lim.max_waiting_per_principal:
            return _error(
                f"this caller already has {lim.max_in_flight_per_principal} requests running "
                f"and {lim.max_waiting_per_principal} waiting; retry after 1s",
                "maxWaitingPerPrincipal",
                maxInFlightPerPrincipal=lim.max_in_flight_per_principal,
                maxWaitingPerPrincipal=lim.max_waiting_per_principal,
            )
        if len(self.queue) >= lim.max_waiting:
            return _error(
                f"the server is at capacity ({lim.max_in_flight} requests running, "
                f"{lim.max_waiting} waiting); retry after 1s",
                "maxInFlight",
                maxInFlight=lim.max_in_flight,
                maxWaiting=lim.max_waiting,
            )
        return None

    async def _hold(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            async with asyncio.timeout(self.limits.hold_seconds):
                await self.app(scope, receive, sending)
        except TimeoutError:
            STOPPED.inc()
            if not started:
                seconds = self.limits.hold_seconds
                message = f"the request ran longer than {seconds:g}s and was stopped"
                await _answer(send, _error(message, "requestTimeout", holdSeconds=seconds))

    async def _wait(self, who: Who) -> None:
        """Wait in line; the slot is handed over by ``_release`` (``running`` counts it)."""
        turn = _Turn(who, asyncio.get_running_loop().create_future())
        self.queue.append(turn)
        self.waiting_by[who] += 1
        WAITING.set(len(self.queue))
        try:
            await turn.granted
        except asyncio.CancelledError:
            if turn.granted.done() and not turn.granted.cancelled():
                self._release(who)  # granted as the client left: pass the slot on
            else:
                self.queue.remove(turn)
                self._left_line(who)
            raise
        finally:
            WAITING.set(len(self.queue))

    def _release(self, who: Who) -> None:
        self.running -= 1
        self._forget(self.running_by, who)
        # The freed slot goes to the first waiter whose principal is under its share; a
        # waiter whose own share is full stays in line without blocking those behind it.
        for turn in self.queue:
            if not turn.granted.done() and self._may_run(turn.who):
                self.queue.remove(turn)
                self._left_line(turn.who)
                self.running += 1
                self.running_by[turn.who] += 1
                turn.granted.set_result(None)
                break
        IN_FLIGHT.set(self.running)

    def _left_line(self, who: Who) -> None:
        self._forget(self.waiting_by, who)

    @staticmethod
    def _forget(counts: Counter[Who], who: Who) -> None:
        counts[who] -= 1
        if counts[who] <= 0:
            del counts[who]


def _error(message: str, limit: str, **details: Any) -> dict[str, Any]:
    return {
        "message": message,
        "extensions": {
            "code": ErrorCode.UNAVAILABLE.value,
            "limit": limit,
            **details,
            "retryAfterSeconds": 1,
        },
    }


async def _answer(send: Send, error: dict[str, Any]) -> None:
    body = orjson.dumps({"errors": [error]})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
