"""The token bucket alone, on a fake clock."""

from __future__ import annotations

import pytest

from palimpsest.ratelimit import TokenBuckets


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
