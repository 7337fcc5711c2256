"""Freshness (``palimpsest bench freshness``): how soon a harvested turn is recallable.

A server in this process, with the settings as configured (by default one consolidator
worker of its own, ``PALIMPSEST_SERVE_CONSOLIDATORS``), is sent one span per ``harvest`` call
at a steady ``rate`` in all, by ``users`` users of a fresh tenant in turn (one run each; a
user's calls go one after another, as one runtime's would). For every span, ``search`` asks
with the span's words until the span's turn is among the hits; the time from the harvest's
answer (the span is durable then) to the answer of that search is the span's
harvest-to-recall time. A span not found within ``timeout`` is counted as ``missed``.

So that the asking does not itself load the server with searches that cannot succeed yet,
each user's ``pendingWork`` is read every ``WATCH_EVERY_S`` (a count, cheap), and a span is
searched for once its user's count of consolidated spans covers it (spans are consolidated
oldest first within a user), then every ``ASK_EVERY_S`` until found. The users are erased
afterwards.
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

WATCH_EVERY_S = 0.1
ASK_EVERY_S = 0.25
SEARCHERS = 4  # searches in flight at once, at most
HARVEST = (
    "mutation($spans: [SpanInput!]!) { harvest(spans: $spans, compactionGeneration: 1) "
    "{ accepted spanIds } }"
)
SEARCH = (
    "query($q: String!) { search(scope: USER, query: $q, topK: 5, sources: [DOCUMENTS]) "
    "{ hits { id } } }"
)
PENDING = "{ pendingWork { done consolidators } }"
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
    banked: int = 0
    missed: int = 0
    errors: int = 0
    workers: int | None = None
    last_banked: float = 0.0


@dataclass
class Banked:
    span_id: str
    text: str
    at: float


class User:
    def __init__(self, http: httpx.AsyncClient, token: str) -> None:
        self.http = http
        self.headers = {"Authorization": f"Bearer {token}"}
        self.turn = asyncio.Lock()  # one harvest call at a time, as one runtime sends them
        self.spans: list[Banked] = []
        self.done = 0

    async def call(self, query: str, **variables: Any) -> dict[str, Any]:
        response = await self.http.post(
            "/graphql", json={"query": query, "variables": variables}, headers=self.headers
        )
        body: dict[str, Any] = response.json()
        if body.get("errors") or response.status_code != 200:
            raise RuntimeError(str(body.get("errors"))[:200])
        data: dict[str, Any] = body["data"]
        return data


def run(
    settings: Settings,
    seconds: float = 30.0,
    rate: float = 20.0,
    users: int = 4,
    timeout: float = 15.0,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    settings = settings.replace(log_level="WARNING")
    tag = uuid.uuid4().hex[:6]
    keys = load_keys(settings)
    tokens = [
        mint(
            keys,
            tenant=f"bench-fresh-{tag}",
            user=f"bench-{u}",
            agent="bench",
            run=f"run-{tag}-{u}",
            ttl_seconds=3600,
        )
        for u in range(users)
    ]
    spans = max(1, round(seconds * rate))
    say("starting a server (warm-up first) ...")
    with serve_in_thread(settings) as url:
        say(f"{spans} spans at {rate}/s from {users} users, each searched for until found ...")
        started = time.perf_counter()
        figures = asyncio.run(_measure(url, tokens, tag, spans, rate, timeout))
        wall = time.perf_counter() - started
    recall = figures.recall_s
    return {
        "benchmark": "freshness",
        "spans": spans,
        "users": users,
        "rate_per_s": rate,
        "harvested_per_s": round(figures.banked / figures.last_banked, 2)
        if figures.last_banked
        else None,
        "found": len(recall),
        "missed": figures.missed,
        "errors": figures.errors,
        "harvest_to_recall_p50_s": _pct(recall, 50),
        "harvest_to_recall_p95_s": _pct(recall, 95),
        "harvest_to_recall_max_s": round(max(recall), 3) if recall else None,
        "harvest_ms_p50": _pct(figures.harvest_ms, 50),
        "harvest_ms_p95": _pct(figures.harvest_ms, 95),
        "search_ms_p50": _pct(figures.search_ms, 50),
        "searches": len(figures.search_ms),
        "server_consolidators": figures.workers,
        "consolidate_poll_seconds": settings.queue.poll_seconds,
        "consolidate_batch_size": settings.queue.batch_size,
        "seconds": round(wall, 2),
    }


async def _measure(
    url: str, tokens: list[str], tag: str, spans: int, rate: float, give_up_s: float
) -> Figures:
    figures = Figures()
    limits = httpx.Limits(max_connections=SEARCHERS + 2 * len(tokens) + 2)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        people = [User(http, t) for t in tokens]
        searchers = asyncio.Semaphore(SEARCHERS)
        start = time.perf_counter()

        async def confirm(user: User, span: Banked) -> None:
            """Search until the span's turn is a hit (it is consolidated by now)."""
            while time.perf_counter() - span.at < give_up_s:
                async with searchers:
                    asked = time.perf_counter()
                    try:
                        hits = (await user.call(SEARCH, q=span.text))["search"]["hits"]
                    except (RuntimeError, httpx.HTTPError):
                        figures.errors += 1
                        hits = []
                    now = time.perf_counter()
                    figures.search_ms.append((now - asked) * 1000)
                if any(h["id"] == span.span_id for h in hits):
                    figures.recall_s.append(now - span.at)
                    return
                await asyncio.sleep(ASK_EVERY_S)
            figures.missed += 1

        async def watch(user: User, until: asyncio.Event) -> None:
            """Start a span's search once its user's consolidated count covers it."""
            asked = 0
            checks: list[asyncio.Task[None]] = []
            while not until.is_set() or asked < len(user.spans):
                try:
                    work = (await user.call(PENDING))["pendingWork"]
                    user.done = int(work["done"])
                    figures.workers = int(work["consolidators"])
                except (RuntimeError, httpx.HTTPError):
                    figures.errors += 1
                while asked < min(user.done, len(user.spans)):
                    checks.append(asyncio.create_task(confirm(user, user.spans[asked])))
                    asked += 1
                late = [s for s in user.spans[asked:] if time.perf_counter() - s.at > give_up_s]
                if until.is_set() and late and asked + len(late) >= len(user.spans):
                    figures.missed += len(late)  # never consolidated in time
                    break
                await asyncio.sleep(WATCH_EVERY_S)
            await asyncio.gather(*checks)

        async def bank(i: int) -> None:
            user = people[i % len(people)]
            text = span_text(i, tag)
            async with user.turn:
                sent = time.perf_counter()
                try:
                    data = await user.call(HARVEST, spans=[{"text": text, "speaker": "Bench"}])
                except (RuntimeError, httpx.HTTPError):
                    figures.errors += 1
                    return
                banked = time.perf_counter()
                [span_id] = data["harvest"]["spanIds"]
                user.spans.append(Banked(span_id, text, banked))
            figures.harvest_ms.append((banked - sent) * 1000)
            figures.banked += 1
            figures.last_banked = banked - start

        harvested = asyncio.Event()
        watchers = [asyncio.create_task(watch(u, harvested)) for u in people]
        sending: list[asyncio.Task[None]] = []
        try:
            for i in range(spans):
                # A steady rate: each span at its own instant, whatever earlier calls take.
                await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
                sending.append(asyncio.create_task(bank(i)))
            await asyncio.gather(*sending)
            harvested.set()
            await asyncio.gather(*watchers)
        finally:
            for task in [*sending, *watchers]:
                task.cancel()
            for user in people:
                try:
                    await user.call(ERASE)
                except (RuntimeError, httpx.HTTPError):
                    figures.errors += 1
    return figures


def _pct(values: list[float], pct: float) -> float | None:
    return round(percentile(values, pct), 3) if values else None
