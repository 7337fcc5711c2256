"""The token bucket alone, on a fake clock."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from palimpsest.middleware.auth import AuthenticatedCaller
from palimpsest.middleware.ratelimit import AnonymousRateLimit, TokenBuckets
from tests.unit.principals import principal


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate=2.0, burst=3, clock=clock)
    alice = ("acme", "alice", "planner")
    assert [buckets.take(alice) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take(alice) == pytest.approx(0.5)  # one token comes back every 0.5 s
    clock.now += 0.5
    assert buckets.take(alice) == 0.0
    assert buckets.take(alice) > 0.0


def test_buckets_are_per_principal() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate=1.0, burst=1, clock=clock)
    assert buckets.take(("acme", "alice", None)) == 0.0
    assert buckets.take(("acme", "alice", None)) > 0.0
    # Same user in another tenant, another agent of the same user: separate buckets.
    assert buckets.take(("other", "alice", None)) == 0.0
    assert buckets.take(("acme", "alice", "planner")) == 0.0


def test_saving_up_stops_at_the_burst() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate=10.0, burst=2, clock=clock)
    key = ("acme", None, None)
    buckets.take(key)
    clock.now += 3600
    assert [buckets.take(key) for _ in range(2)] == [0.0, 0.0]
    assert buckets.take(key) > 0.0


async def _status(app: Any, path: str, client: str, user: object = None) -> int:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "path": path, "client": (client, 5000), "user": user}, receive, send)
    if sent[0]["status"] == 429:
        error = orjson.loads(sent[1]["body"])["errors"][0]
        assert error["extensions"]["code"] == "QUOTA_EXCEEDED"
        assert error["extensions"]["limit"] == "anonymousRateLimit"
        retry = int(dict(sent[0]["headers"])[b"retry-after"])
        assert retry == error["extensions"]["retryAfterSeconds"] >= 1
    return int(sent[0]["status"])


async def test_tokenless_requests_are_limited_per_address_and_health_checks_are_not() -> None:
    async def ok(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = AnonymousRateLimit(ok, rate=0.001, burst=2, exempt=frozenset({"/healthz"}))
    assert [await _status(app, "/graphql", "10.0.0.1") for _ in range(3)] == [200, 200, 429]
    assert await _status(app, "/mcp", "10.0.0.1") == 429  # one bucket per address, every path
    assert await _status(app, "/graphql", "10.0.0.2") == 200  # another address is not slowed
    assert [await _status(app, "/healthz", "10.0.0.1") for _ in range(3)] == [200] * 3
    caller = AuthenticatedCaller(principal())
    assert await _status(app, "/graphql", "10.0.0.1", caller) == 200  # counted per principal
