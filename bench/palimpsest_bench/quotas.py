"""What the quota counters cost a write (docs/reference/quotas.md).

Two user scopes of one tenant take the same writes, interleaved, in process (resolvers, no
HTTP, the deterministic hash embedder): ``counted`` with the quotas as shipped, ``uncounted``
with ``quotas.admit`` switched off for its writes. Each write is one fact (two new entities)
or one new note, so every write raises two or one counters. Reported: p50/p95 per write of
each side and their ratio; and ``near_limit``: the same fact write when the scope's bound is
past the limit, so every write counts the plane exactly. The two people are erased afterwards.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.identity import Principal, Scope
from palimpsest.identity.principal import console_operator
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas
from palimpsest.runtime import open_services
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench.common import HashEmbedder, principal

_real_admit = quotas.admit


async def _no_admit(
    tx: ScopedTx,
    settings: Settings,
    created: Mapping[Any, int],
    *,
    exempt: frozenset[Any] = frozenset(),
) -> None:
    return None


@contextmanager
def _uncounted() -> Iterator[None]:
    quotas.admit = _no_admit
    try:
        yield
    finally:
        quotas.admit = _real_admit


def run(settings: Settings, writes: int, say: Callable[[str], None] | None = None) -> Any:
    return asyncio.run(_run(settings, writes, say or (lambda _: None)))


async def _run(settings: Settings, writes: int, say: Callable[[str], None]) -> dict[str, Any]:
    tenant = f"bench-quotas-{uuid.uuid4().hex[:8]}"
    on, off, near = (principal(tenant, u) for u in ("counted", "uncounted", "near"))
    async with open_services(settings) as opened:
        svc = replace(
            opened, embedder=HashEmbedder(opened.embedder.model_name, opened.embedder.dimensions)
        )
        try:
            return await _measure(svc, on, off, near, writes, say)
        finally:
            admin = console_operator(tenant)
            for who in (on, off, near):
                assert who.user_id is not None
                await erasure.erase_user(svc, admin, who.user_id)


async def _timed(work: Awaitable[Any]) -> float:
    started = time.perf_counter()
    await work
    return time.perf_counter() - started


def _fact(i: int) -> list[FactDraft]:
    return [FactDraft(EntityRef("Person", f"a{i}"), "knows", EntityRef("Person", f"b{i}"), None)]


async def _measure(
    svc: Services,
    on: Principal,
    off: Principal,
    near: Principal,
    writes: int,
    say: Callable[[str], None],
) -> dict[str, Any]:
    out: dict[str, Any] = {"writes": writes}
    kinds: dict[str, Callable[[Principal, int], Awaitable[Any]]] = {
        "fact": lambda who, i: facts.assert_facts(svc, who, Scope.USER, _fact(i)),
        "note": lambda who, i: memory.set_value(
            svc, who, Scope.USER, f"k{i}", "v", None, False, None
        ),
    }
    for name, write in kinds.items():
        counted: list[float] = []
        uncounted: list[float] = []
        for i in range(writes):
            counted.append(await _timed(write(on, i)))
            with _uncounted():
                uncounted.append(await _timed(write(off, i)))
        out[name] = _side_by_side(counted, uncounted)
        say(f"{name}: {out[name]}")
    # Past the bound: a limit the scope is just under, so every fact write counts exactly.
    tight = replace(svc, settings=svc.settings.replace(max_scope_facts=writes * 2))
    for i in range(writes):
        await facts.assert_facts(svc, near, Scope.USER, _fact(i))
    exact = [
        await _timed(facts.assert_facts(tight, near, Scope.USER, _fact(writes + i)))
        for i in range(min(writes, 50))
    ]
    out["near_limit_fact"] = {**_pcts(exact), "stored_facts": writes}
    return out


def _p(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1]


def _pcts(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(_p(xs, 50) * 1000, 3), "p95_ms": round(_p(xs, 95) * 1000, 3)}


def _side_by_side(counted: list[float], uncounted: list[float]) -> dict[str, Any]:
    return {
        "counted": _pcts(counted),
        "uncounted": _pcts(uncounted),
        "p50_ratio": round(_p(counted, 50) / _p(uncounted, 50), 3),
    }
