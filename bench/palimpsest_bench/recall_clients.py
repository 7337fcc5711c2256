"""``bench recall-latency --clients N``: throughput and latency with N concurrent clients.

The API runs as its own process (``workers`` uvicorn workers), so the clients' threads never
hold its interpreter lock; each client thread sends its share of the queries one request at
a time over its own keep-alive connection. Errors are counted, never hidden.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest_bench.recall_bench import TOP_K, Progress, latency_stats
from palimpsest_bench.recall_load import ScopePlan, cpu_steal_seconds, load_average, stolen_since
from palimpsest_bench.sql import GraphQLClient
from palimpsest_suites.served import ApiProcess

SEARCH_GQL = (
    "query($scope: Scope!, $q: String!, $k: Int!) { search(scope: $scope, query: $q, topK: $k) "
    "{ hits { kind id score cosine vectorRank fulltextRank text documentId } } }"
)


def concurrent_run(
    settings: Settings,
    picks: Sequence[tuple[ScopePlan, str]],
    tokens: Mapping[str, str],
    warmup: int,
    clients: int,
    workers: int,
    say: Progress,
) -> dict[str, Any]:
    """The API as its own process, so the clients' threads never hold its interpreter lock;
    each client thread sends its share of the queries one at a time."""
    with tempfile.TemporaryDirectory(prefix="palimpsest-latency-") as tmp:
        api = ApiProcess(api_env(settings), Path(tmp) / "api.log", workers=workers)
        say(f"starting the API ({workers} worker(s)) ...")
        api.start()
        try:
            return _drive(api.url, picks, tokens, warmup, clients, workers, say, settings)
        finally:
            api.stop()


def _drive(
    url: str,
    picks: Sequence[tuple[ScopePlan, str]],
    tokens: Mapping[str, str],
    warmup: int,
    clients: int,
    workers: int,
    say: Progress,
    settings: Settings,
) -> dict[str, Any]:
    def one(client: GraphQLClient, p: ScopePlan, text: str) -> float:
        client.headers["Authorization"] = f"Bearer {tokens[p.key]}"
        t0 = time.perf_counter()
        data = client.call(SEARCH_GQL, scope="USER", q=text, k=TOP_K)
        if not data["search"]["hits"]:
            raise RuntimeError("a benchmark search returned nothing")
        return (time.perf_counter() - t0) * 1000

    warm = GraphQLClient(url, tokens[picks[0][0].key])
    try:
        for p, text in picks[:warmup]:
            one(warm, p, text)
    finally:
        warm.close()
    measured = list(picks[warmup:])
    errors: list[str] = []

    def client_loop(share: Sequence[tuple[ScopePlan, str]]) -> list[float]:
        client = GraphQLClient(url, tokens[share[0][0].key])
        out: list[float] = []
        try:
            for p, text in share:
                try:
                    out.append(one(client, p, text))
                except Exception as e:  # counted, never hidden; the client reconnects
                    errors.append(type(e).__name__)
                    client.close()
                    client = GraphQLClient(url, tokens[p.key])
        finally:
            client.close()
        return out

    shares = [measured[i::clients] for i in range(clients)]
    say(f"{len(measured)} queries from {clients} concurrent clients ...")
    load_before = load_average()
    steal_before = cpu_steal_seconds()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        results = list(pool.map(client_loop, [s for s in shares if s]))
    wall = time.perf_counter() - started
    ms = [x for r in results for x in r]
    return {
        "clients": clients,
        "workers": workers,
        "embedding_threads": settings.embedding.threads,
        "throughput_per_s": round(len(ms) / wall, 1),
        **latency_stats(ms),
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "seconds": round(wall, 1),
        "load_avg_before": load_before,
        "load_avg_after": load_average(),
        "cpu_steal_s": stolen_since(steal_before),
    }


def api_env(s: Settings) -> dict[str, str]:
    """The settings the API process needs to reach the same Neo4j and accept our tokens."""
    env = {
        "PALIMPSEST_HOME": str(s.home),
        "PALIMPSEST_NEO4J_BOLT_PORT": str(s.neo4j.bolt_port),
        "PALIMPSEST_NEO4J_HTTP_PORT": str(s.neo4j.http_port),
        "PALIMPSEST_LOG_LEVEL": "WARNING",
        "PALIMPSEST_RATE_LIMIT_PER_SECOND": "0",
        # Every timed search pays its query embedding, as a new question would.
        "PALIMPSEST_EMBEDDING_CACHE_SIZE": "0",
    }
    if s.neo4j.uri:
        env["PALIMPSEST_NEO4J_URI"] = s.neo4j.uri
    if s.embedding.threads is not None:
        env["PALIMPSEST_EMBEDDING_THREADS"] = str(s.embedding.threads)
    return env
