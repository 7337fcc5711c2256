"""The GraphQL edge under the attacks of issue 11 (findings 1 and 2): how fast each attack
document is answered, with and without a token, and how /healthz answers while several run
at once.

The API runs in-process on a free port (or ``--url`` points at a running one, e.g. an older
build to compare); requests come from threads with their own connections. Figures are wall
seconds per request; ``healthz_ms`` are /healthz latencies sampled every 50 ms while
``attackers`` threads send the attack documents ``rounds`` times each.
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.server import serve_in_thread


def repeated_fields(n: int) -> str:
    return "{ " + " ".join("me { tenant }" for _ in range(n)) + " }"


def many_fragments(n: int) -> str:
    spreads = " ".join(
        f"fragment F{i} on Query {{ me {{ tenant }} ...F{i + 1} }}" for i in range(n)
    )
    return "{ ...F0 } " + spreads + f" fragment F{n} on Query {{ health }}"


def flat_fragments(n: int) -> str:
    # Every fragment spread at the root: validation compares them pairwise.
    spreads = " ".join(f"...F{i}" for i in range(n))
    return (
        "{ "
        + spreads
        + " } "
        + " ".join(f"fragment F{i} on Query {{ me {{ tenant }} }}" for i in range(n))
    )


def aliased(field: str, n: int) -> str:
    return " ".join(f"a{i}: {field}" for i in range(n))


ATTACKS = {
    "repeated_fields_500": repeated_fields(500),
    "fragments_600": many_fragments(600),
    "flat_fragments_600": flat_fragments(600),
    "aliased_search_200": "{ "
    + aliased('search(scope: USER, query: "quarterly revenue") { scopes }', 200)
    + " }",
    "aliased_memory_set_embed_50": "mutation { "
    + aliased('memorySet(scope: USER, key: "bench-edge", value: "v", embed: true) { key }', 50)
    + " }",
}
STALL_ATTACKS = ("repeated_fields_500", "fragments_600", "flat_fragments_600")


def run(
    settings: Settings,
    url: str | None = None,
    attackers: int = 4,
    rounds: int = 2,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    say = say or (lambda m: print(m, file=sys.stderr))
    settings = settings.replace(log_level="WARNING")
    token = mint(load_keys(settings), tenant=f"bench-edge-{uuid.uuid4().hex[:8]}", user="bench")
    with _server(settings, url, say) as base:
        single: dict[str, Any] = {}
        for name, query in ATTACKS.items():
            for who, bearer in (("tokenless", None), ("token", token)):
                say(f"{name} ({who}) ...")
                single[f"{name}/{who}"] = _one(base, query, bearer)
        stalls: dict[str, Any] = {}
        for name in STALL_ATTACKS:
            for who, bearer in (("tokenless", None), ("token", token)):
                say(f"{attackers} x {rounds} x {name} ({who}) while probing /healthz ...")
                stalls[f"{name}/{who}"] = _stall(base, ATTACKS[name], bearer, attackers, rounds)
    return {"url": url or "in-process", "single": single, "concurrent": stalls}


@contextmanager
def _server(settings: Settings, url: str | None, say: Callable[[str], None]) -> Iterator[str]:
    if url is not None:
        yield url
        return
    say("starting the API (Neo4j, embedding model) ...")
    with serve_in_thread(settings) as base:
        yield base


def _one(base: str, query: str, bearer: str | None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    started = time.perf_counter()
    with httpx.Client(base_url=base, timeout=300) as client:
        response = client.post("/graphql", json={"query": query}, headers=headers)
    seconds = time.perf_counter() - started
    code = None
    if response.headers.get("content-type", "").startswith("application/json"):
        errors = response.json().get("errors") or [{}]
        code = (errors[0].get("extensions") or {}).get("code")
    return {"status": response.status_code, "code": code, "seconds": round(seconds, 3)}


def _stall(
    base: str, query: str, bearer: str | None, attackers: int, rounds: int
) -> dict[str, Any]:
    done = threading.Event()
    latencies: list[float] = []

    def probe() -> None:
        with httpx.Client(base_url=base, timeout=300) as client:
            while not done.is_set():
                started = time.perf_counter()
                client.get("/healthz")
                latencies.append((time.perf_counter() - started) * 1000)
                time.sleep(0.05)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=attackers) as pool:
        results = list(pool.map(lambda _: _one(base, query, bearer), range(attackers * rounds)))
    elapsed = time.perf_counter() - started
    done.set()
    prober.join()
    ordered = sorted(latencies)
    return {
        "requests": len(results),
        "statuses": sorted({r["status"] for r in results}),
        "seconds": round(elapsed, 2),
        "healthz_ms": {
            "n": len(ordered),
            "p50": round(statistics.median(ordered), 1) if ordered else None,
            "max": round(ordered[-1], 1) if ordered else None,
        },
    }
