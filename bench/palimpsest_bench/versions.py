"""The cost of keeping every version of a note (docs/decisions/0007-note-versions.md).

Two user scopes hold the same ``keys`` keys with the same final values: in ``one`` each key
was written once, in ``ten`` each was written ``versions`` times (so it holds
``versions - 1`` past versions per key). Measured side by side in one run, on the configured
Neo4j, in process (resolvers, no HTTP), with the deterministic hash embedder on both sides:

- ``write_ms``: mean time of a write that replaces a value (``ten``: keeping the old one as a
  version) against a write into a scope without history (``one``'s first writes);
- ``storage``: the logical bytes of a past version (value, text, terms, vector), counted
  by Cypher over the stored properties, and how many nodes each scope holds;
- ``current_read`` and ``recall``: p50/p95 of ``memory(key)`` and of a hybrid note recall,
  interleaved between the two scopes; ``ratio`` is ten / one;
- ``known_at_read``: p50/p95 of ``memory(key, knownAt)`` reading the middle version in
  ``ten``, against the present read (ratio).

The two people are erased afterwards.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from neo4j import AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Principal, Scope
from palimpsest.identity.principal import console_operator
from palimpsest.identity.scopes import scope_key
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.notes import versions as note_versions
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest_bench.common import HashEmbedder, principal

WORDS = [
    "harbour",
    "lantern",
    "quartz",
    "meadow",
    "falcon",
    "copper",
    "glacier",
    "orchid",
    "canyon",
    "ember",
]
STORAGE = """
MATCH (v:MemoryVersion {scope_key: $key})
RETURN count(v) AS versions,
       coalesce(sum(size(v.value) + size(coalesce(v.text, '')) + size(coalesce(v.ft, ''))
                    + 8 * size(coalesce(v.embedding, [])) + 8 * size(coalesce(v.ft_tf, []))
                    + size(v.key)), 0) AS bytes
"""
NODES = "MATCH (n) WHERE n.scope_key = $key RETURN count(n) AS n"


def run(
    settings: Settings,
    keys: int = 200,
    versions: int = 10,
    reads: int = 300,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    return asyncio.run(_run(settings, keys, versions, reads, say or (lambda _: None)))


async def _run(
    settings: Settings, keys: int, versions: int, reads: int, say: Callable[[str], None]
) -> dict[str, Any]:
    tenant = f"bench-versions-{uuid.uuid4().hex[:8]}"
    one, ten = principal(tenant, "one"), principal(tenant, "ten")
    async with open_services(settings) as opened:
        svc = replace(
            opened,
            embedder=HashEmbedder(opened.embedder.model_name, opened.embedder.dimensions),
        )
        try:
            return await _measure(svc, settings, tenant, one, ten, keys, versions, reads, say)
        finally:
            admin = console_operator(tenant)
            for who in (one, ten):
                assert who.user_id is not None
                await erasure.erase_user(svc, admin, who.user_id)


async def _measure(
    svc: Services,
    settings: Settings,
    tenant: str,
    one: Principal,
    ten: Principal,
    keys: int,
    versions: int,
    reads: int,
    say: Callable[[str], None],
) -> dict[str, Any]:
    names = [f"note/{i:05d}" for i in range(keys)]

    def text(i: int, v: int) -> str:
        a, b = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS) + v) % len(WORDS)]
        return f"note {i} version {v}: the {a} by the {b}, written for the benchmark"

    async def write(who: Principal, i: int, v: int) -> float:
        started = time.perf_counter()
        await memory.set_value(svc, who, Scope.USER, names[i], text(i, v), None, True, None)
        return time.perf_counter() - started

    say(f"writing {keys} keys once and {keys} keys {versions} times")
    first = [await write(one, i, versions - 1) for i in range(keys)]
    middle: dict[int, datetime] = {}
    fresh: list[float] = []
    replacing: list[float] = []
    for v in range(versions):
        for i in range(keys):
            took = await write(ten, i, v)
            (fresh if v == 0 else replacing).append(took)
            if v == versions // 2:
                [entry] = [await memory.get(svc, ten, Scope.USER, names[i])]
                assert entry is not None
                middle[i] = entry.updated_at
    say("measuring reads and recall")
    rng = random.Random(1)
    picks = [rng.randrange(keys) for _ in range(reads)]
    queries = [f"the {WORDS[rng.randrange(10)]} by the {WORDS[rng.randrange(10)]}" for _ in picks]
    times: dict[str, list[float]] = {k: [] for k in ("read1", "read10", "rec1", "rec10", "past")}

    async def timed(bucket: str, work: Awaitable[Any]) -> None:
        started = time.perf_counter()
        await work
        times[bucket].append(time.perf_counter() - started)

    def ask(q: str) -> asks.Ask:
        return asks.Ask(query=q, scope=Scope.USER, top_k=10, sources=[Source.NOTES.value])

    for i, q in zip(picks, queries, strict=True):
        await timed("read1", memory.get(svc, one, Scope.USER, names[i]))
        await timed("read10", memory.get(svc, ten, Scope.USER, names[i]))
        await timed("past", memory.get(svc, ten, Scope.USER, names[i], None, middle[i]))
        await timed("rec1", asks.recall(svc, one, ask(q)))
        await timed("rec10", asks.recall(svc, ten, ask(q)))
    history = await note_versions.history(svc, ten, Scope.USER, names[0], 100, None)
    assert len(history.items) == versions

    driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
    async with driver:
        storage = {}
        for name, who in (("one", one), ("ten", ten)):
            key = scope_key(tenant, Scope.USER, who.user_id or "")
            [row], _, _ = await driver.execute_query(STORAGE, key=key)
            [nodes], _, _ = await driver.execute_query(NODES, key=key)
            storage[name] = {
                "past_versions": row["versions"],
                "bytes": row["bytes"],
                "nodes": nodes["n"],
            }
    past_versions = storage["ten"]["past_versions"]
    return {
        "notes": {
            "keys": keys,
            "versions_per_key": {"one": 1, "ten": versions},
            "write_ms": {
                "first_write_one": _ms(statistics.mean(first)),
                "first_write_ten": _ms(statistics.mean(fresh)),
                "replacing_write_ten": _ms(statistics.mean(replacing)),
                "amplification": round(statistics.mean(replacing) / statistics.mean(first), 3),
            },
            "storage": {
                **storage,
                "bytes_per_past_version": round(storage["ten"]["bytes"] / past_versions)
                if past_versions
                else None,
            },
            "current_read": _side_by_side(times["read1"], times["read10"]),
            "recall": _side_by_side(times["rec1"], times["rec10"]),
            "known_at_read": {
                **_pcts(times["past"]),
                "p95_ratio_to_present": round(_p(times["past"], 95) / _p(times["read10"], 95), 3),
            },
        }
    }


def _p(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1]


def _ms(x: float) -> float:
    return round(x * 1000, 3)


def _pcts(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": _ms(_p(xs, 50)), "p95_ms": _ms(_p(xs, 95))}


def _side_by_side(one: list[float], ten: list[float]) -> dict[str, Any]:
    return {
        "one": _pcts(one),
        "ten": _pcts(ten),
        "p50_ratio": round(_p(ten, 50) / _p(one, 50), 3),
        "p95_ratio": round(_p(ten, 95) / _p(one, 95), 3),
    }
