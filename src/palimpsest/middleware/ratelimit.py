"""Rate limits: a token bucket per (tenant, user, agent) of the verified token, and one per
client address for requests without a token.

Pure ASGI middlewares placed after authentication, so the principal's key comes only from a
verified run token. Requests without one are counted by ``AnonymousRateLimit`` instead, by the
peer address, except the health checks (an orchestrator must see them answer during a flood).
Over a limit, the request is answered ``429`` with ``Retry-After`` (whole seconds) and one
GraphQL-shaped ``QUOTA_EXCEEDED`` error naming the limit, and nothing runs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from palimpsest.errors import ErrorCode

Key = tuple[str, str | None, str | None]
MAX_BUCKETS = 100_000  # past this, idle full buckets are dropped


@dataclass(slots=True)
class Bucket:
    tokens: float
    updated: float


class TokenBuckets:
    """``rate`` tokens per second, at most ``burst`` saved up; one token per request."""

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.buckets: dict[Key, Bucket] = {}

    def take(self, key: Key) -> float:
        """Take a token: 0.0 when allowed, else the seconds until one is available."""
        now = self.clock()
        bucket = self.buckets.get(key)
        if bucket is None:
            if len(self.buckets) >= MAX_BUCKETS:
                self._prune(now)
            bucket = self.buckets[key] = Bucket(float(self.burst), now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _prune(self, now: float) -> None:
        full_after = self.burst / self.rate
        idle = [k for k, b in self.buckets.items() if now - b.updated >= full_after]
        for k in idle:
            del self.buckets[k]


class RateLimit:
    """The middleware; ``rate`` 0 switches it off."""

    def __init__(self, app: ASGIApp, rate: float, burst: int) -> None:
        self.app = app
        self.buckets = TokenBuckets(rate, burst) if rate > 0 else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = getattr(scope.get("user"), "principal", None)
        if self.buckets is None or scope["type"] != "http" or principal is None:
            await self.app(scope, receive, send)
            return
        key = (principal.tenant_id, principal.user_id, principal.agent_name)
        wait = self.buckets.take(key)
        if wait == 0.0:
            await self.app(scope, receive, send)
            return
        message = f"rate limit: {self.buckets.rate:g} requests/s per principal"
        await _refuse(send, self.buckets, wait, message, "rateLimit")


class AnonymousRateLimit:
    """Requests without a verified token, per client address; ``rate`` 0 switches it off."""

    def __init__(self, app: ASGIApp, rate: float, burst: int, exempt: frozenset[str]) -> None:
        self.app = app
        self.buckets = TokenBuckets(rate, burst) if rate > 0 else None
        self.exempt = exempt  # paths never counted (health checks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            self.buckets is None
            or scope["type"] != "http"
            or getattr(scope.get("user"), "principal", None) is not None
            or scope["path"] in self.exempt
        ):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        wait = self.buckets.take((client[0] if client else "", None, None))
        if wait == 0.0:
            await self.app(scope, receive, send)
            return
        message = f"rate limit without a token: {self.buckets.rate:g} requests/s per address"
        await _refuse(send, self.buckets, wait, message, "anonymousRateLimit")


async def _refuse(send: Send, buckets: TokenBuckets, wait: float, message: str, limit: str) -> None:
    retry = max(1, math.ceil(wait))
    error = {
        "message": f"{message} (burst {buckets.burst}); retry after {retry}s",
        "extensions": {
            "code": ErrorCode.QUOTA_EXCEEDED.value,
            "limit": limit,
            "ratePerSecond": buckets.rate,
            "burst": buckets.burst,
            "retryAfterSeconds": retry,
        },
    }
    body = orjson.dumps({"errors": [error]})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(retry).encode()),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
