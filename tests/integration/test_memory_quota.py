"""The key/value quota on the real Neo4j: the scope node's ``memory_bytes`` stays the exact
sum of its stored notes through writes, overwrites, deletes and concurrent writers, so a
write well under the quota needs no sum; the refusal still counts live notes only."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

BOUND = """
MATCH (s:Scope {scope_key: $k})
RETURN s.memory_bytes AS bound,
       COLLECT { MATCH (m:Memory {scope_key: $k}) RETURN sum(m.bytes) } [0] AS stored
"""


def owner(svc: Services, user: str) -> tuple[Services, Principal, str]:
    """Services with a 400-byte quota, a fresh tenant's user, and their USER scope key."""
    quota = replace(svc, settings=svc.settings.replace(max_scope_bytes=400))
    who = principal(tenant_id=f"quota-{uuid.uuid4().hex[:8]}", user_id=user)
    return quota, who, resolve_scope(who, Scope.USER).scope_key


def bound_and_stored(driver: Driver, key: str) -> tuple[Any, Any]:
    [row], _, _ = driver.execute_query(BOUND, k=key)
    return row["bound"], row["stored"]


async def test_the_scope_bound_is_the_sum_of_its_stored_notes(
    svc: Services, neo4j_driver: Driver
) -> None:
    quota, who, key = owner(svc, "alice")

    async def put(k: str, value: str, ttl: int | None = None, on: Services = quota) -> None:
        await memory.set_value(on, who, Scope.USER, k, value, ttl, False, None)

    await put("a", "x" * 50)
    await put("b", "y" * 80)
    await put("a", "z" * 10)  # an overwrite replaces the note's bytes
    assert await memory.delete(quota, who, Scope.USER, "b")
    bound, stored = bound_and_stored(neo4j_driver, key)
    assert bound == stored == len("a") + len('"' + "z" * 10 + '"')
    # Many writers of one scope at once: every change lands in the bound.
    await asyncio.gather(
        *(put(f"k{i}", "w" * i) for i in range(12)),
        *(memory.delete(quota, who, Scope.USER, f"k{i}") for i in range(0, 12, 3)),
    )
    bound, stored = bound_and_stored(neo4j_driver, key)
    assert bound == stored

    # Fill the quota with a note that expires, then let it expire: the bound still holds its
    # bytes, but the refusal counts live notes only, so the next write fits.
    live_now = int(stored)
    filler = 400 - live_now - len("big") - 2 - 5
    await put("big", "f" * filler, ttl=60)
    with pytest.raises(QuotaExceeded) as refused:
        await put("more", "m" * 10)
    assert refused.value.details["current"] == int(bound_and_stored(neo4j_driver, key)[1])
    later = replace(quota, clock=lambda: quota.clock() + timedelta(seconds=120))
    await put("more", "m" * 10, on=later)
    bound, stored = bound_and_stored(neo4j_driver, key)
    assert bound == stored  # the expired note is still stored, and still counted in both


async def test_an_unknown_bound_is_summed_once_and_kept(
    svc: Services, neo4j_driver: Driver
) -> None:
    quota, who, key = owner(svc, "bob")
    await memory.set_value(quota, who, Scope.USER, "a", "x" * 30, None, False, None)
    # As a bulk import leaves it, or a database written before the bound existed.
    neo4j_driver.execute_query("MATCH (s:Scope {scope_key: $k}) REMOVE s.memory_bytes", k=key)
    assert bound_and_stored(neo4j_driver, key)[0] is None
    await memory.set_value(quota, who, Scope.USER, "b", "y", None, False, None)
    bound, stored = bound_and_stored(neo4j_driver, key)
    assert bound == stored == (1 + 32) + (1 + 3)
