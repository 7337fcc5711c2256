"""Placing new tenants: deterministic, spread, and stable when a shard is added."""

from __future__ import annotations

from collections import Counter

import pytest

from palimpsest.cypher.shards import place

TENANTS = [f"tenant-{i}" for i in range(2000)]


def test_placement_is_a_function_of_the_tenant_and_the_names_alone() -> None:
    assert [place(t, ["a", "b"]) for t in TENANTS] == [place(t, ["b", "a"]) for t in TENANTS]


def test_tenants_spread_over_the_shards() -> None:
    counts = Counter(place(t, ["a", "b", "c"]) for t in TENANTS)
    assert set(counts) == {"a", "b", "c"}
    assert min(counts.values()) > len(TENANTS) / 3 * 0.8


def test_a_new_shard_takes_only_tenants_from_the_others_never_swaps_them() -> None:
    before = {t: place(t, ["a", "b"]) for t in TENANTS}
    after = {t: place(t, ["a", "b", "c"]) for t in TENANTS}
    moved = [t for t in TENANTS if before[t] != after[t]]
    assert all(after[t] == "c" for t in moved)
    assert 0.2 < len(moved) / len(TENANTS) < 0.45  # about a third


def test_no_shard_is_refused() -> None:
    with pytest.raises(ValueError, match="no shard"):
        place("t", [])
