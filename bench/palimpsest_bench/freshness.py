"""Freshness (``palimpsest bench freshness``): how soon a harvested turn is recallable.

A server in this process, with the settings as configured (by default one consolidator
worker of its own, ``PALIMPSEST_SERVE_CONSOLIDATORS``), is sent one span at a time at a
steady ``rate`` by one run of one user of a fresh tenant. For every span a searcher asks
``search`` with the span's words, first ``FIRST_ASK_S`` after the harvest answered and then
every ``ASK_EVERY_S``, until the span's turn is among the hits; the time from the harvest's
answer (the span is durable then) to that hit is the span's harvest-to-recall time. A span
not found within ``timeout`` is counted as ``missed``. The user is erased afterwards.

The figures include the searcher's own pace (a turn is seen at the next ask, not the moment
it is written) and its load on the server: on a small machine both count.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.server import serve_in_thread
from palimpsest_bench.recall_bench import percentile

FIRST_ASK_S = 0.1
ASK_EVERY_S = 0.25
SEARCHERS = 6  # searches in flight at once, at most
HARVEST = (
    "mutation($spans: [SpanInput!]!) { harvest(spans: $spans, compactionGeneration: 1) "
    "{ accepted spanIds } }"
)
SEARCH = (
    "query($q: String!) { search(scope: USER, query: $q, topK: 5, sources: [DOCUMENTS]) "
    "{ hits { id } } }"
)
ERASE = "mutation { eraseMe { __typename } }"

_PLACES = ["harbour", "orchard", "station", "library", "bakery", "workshop", "garden", "pier"]
_DOINGS = ["repainted", "measured", "photographed", "locked", "cleaned", "inspected"]


def span_text(i: int, tag: str) -> str:
    """A turn of its own: one word no other span holds (``tag`` and ``i``), so a search
    with its words finds it among the first hits once it is written."""
    rng = random.Random(i)
    return (
        f"Entry {tag}{i:05d}: on day {i} we {rng.choice(_DOINGS)} the {rng.choice(_PLACES)} "
        f"and counted {rng.randint(2, 90)} crates by the {rng.choice(_PLACES)}."
    )


@dataclass
class Figures:
    recall_s: list[float] = field(default_factory=list)
    harvest_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    missed: int = 0
    errors: int = 0


def run(
    settings: Settings,
    seconds: float = 30.0,
    rate: float = 20.0,
    timeout: float = 15.0,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    settings = settings.model_copy(update={"log_level": "WARNING"})
    tag = uuid.uuid4().hex[:6]
    token = mint(
        load_keys(settings),
        tenant=f"bench-fresh-{tag}",
        user="bench",
        agent="bench",
        run=f"run-{tag}",
        ttl_seconds=3600,
    )
    spans = max(1, round(seconds * rate))
    say("starting a server (warm-up first) ...")
    with serve_in_thread(settings) as url:
        say(f"{spans} spans at {rate}/s, each searched for until found ...")
        started = time.perf_counter()
        figures = asyncio.run(_measure(url, token, tag, spans, rate, timeout))
        wall = time.perf_counter() - started
    recall = figures.recall_s
    return {
        "benchmark": "freshness",
        "spans": spans,
        "rate_per_s": rate,
        "found": len(recall),
        "missed": figures.missed,
        "errors": figures.errors,
        "harvest_to_recall_p50_s": _pct(recall, 50),
        "harvest_to_recall_p95_s": _pct(recall, 95),
        "harvest_to_recall_max_s": round(max(recall), 3) if recall else None,
        "harvest_ms_p50": _pct(figures.harvest_ms, 50),
        "search_ms_p50": _pct(figures.search_ms, 50),
        "searches": len(figures.search_ms),
        "serve_consolidators": settings.serve_consolidators,
        "consolidate_poll_seconds": settings.consolidate_poll_seconds,
        "consolidate_batch_size": settings.consolidate_batch_size,
        "seconds": round(wall, 2),
    }


async def _measure(
    url: str, token: str, tag: str, spans: int, rate: float, give_up_s: float
) -> Figures:
    figures = Figures()
    headers = {"Authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=SEARCHERS + 2)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as http:
        searchers = asyncio.Semaphore(SEARCHERS)

        async def call(query: str, **variables: Any) -> dict[str, Any]:
            response = await http.post("/graphql", json={"query": query, "variables": variables})
            body: dict[str, Any] = response.json()
            if body.get("errors") or response.status_code != 200:
                raise RuntimeError(str(body.get("errors"))[:200])
            data: dict[str, Any] = body["data"]
            return data

        async def follow(span_id: str, text: str, banked: float) -> None:
            await asyncio.sleep(FIRST_ASK_S)
            while time.perf_counter() - banked < give_up_s:
                async with searchers:
                    asked = time.perf_counter()
                    try:
                        hits = (await call(SEARCH, q=text))["search"]["hits"]
                    except (RuntimeError, httpx.HTTPError):
                        figures.errors += 1
                        hits = []
                    now = time.perf_counter()
                    figures.search_ms.append((now - asked) * 1000)
                if any(h["id"] == span_id for h in hits):
                    figures.recall_s.append(now - banked)
                    return
                await asyncio.sleep(ASK_EVERY_S)
            figures.missed += 1

        following: list[asyncio.Task[None]] = []
        start = time.perf_counter()
        try:
            for i in range(spans):
                # A steady rate: each span at its own instant, whatever the last call took.
                await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
                text = span_text(i, tag)
                sent = time.perf_counter()
                try:
                    receipt = (await call(HARVEST, spans=[{"text": text, "speaker": "Bench"}]))[
                        "harvest"
                    ]
                except (RuntimeError, httpx.HTTPError):
                    figures.errors += 1
                    continue
                banked = time.perf_counter()
                figures.harvest_ms.append((banked - sent) * 1000)
                [span_id] = receipt["spanIds"]
                following.append(asyncio.create_task(follow(span_id, text, banked)))
            await asyncio.gather(*following)
        finally:
            for task in following:
                task.cancel()
            try:
                await call(ERASE)
            except (RuntimeError, httpx.HTTPError):
                figures.errors += 1
    return figures


def _pct(values: list[float], pct: float) -> float | None:
    return round(percentile(values, pct), 3) if values else None
