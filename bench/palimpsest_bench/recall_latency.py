"""``bench recall-latency``: scoped ``search`` over GraphQL/HTTP against the same raw work.

N chunks over many USER scopes in four tenants (one big scope with a fifth of the rows,
several hundred small ones; ``recall_load.latency_plan``). The dataset is kept between runs:
tenants ``bench-recall-<N>-t<i>``; a run whose scopes all hold their planned chunk counts
skips the load (``dataset.cached``), a scope left half-loaded is erased and loaded again.
A load that stopped part-way resumes at its last whole batch. Then, per query, interleaved:
``search`` through GraphQL over HTTP (uvicorn in-process on a free port, a real run token,
one keep-alive connection, one request at a time; default sources, topK 10, so the query
embedding and every leg the resolver plans are included), and the raw work: embed the
query, then the same ``cypher/recall.py`` statements in the same two transactions the
resolver plans (``raw_search``). ``overhead`` is p95 / raw_p95: what HTTP, GraphQL, the
resolvers, fusion and the final load add. ``stages``: what the API observed of each stage
(``recall_timing``) for each measured query. Several clients: ``recall_clients.py``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Tx
from palimpsest.domain.ranking import cues
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import ScopeRef
from palimpsest.identity.acting import act_for_user
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.resolvers.facts import ledger as fr
from palimpsest.resolvers.recall import timing
from palimpsest.resolvers.recall.fusion import RankedList
from palimpsest.resolvers.recall.plan import RecallPlan, RecallResult
from palimpsest.resolvers.recall.request import RecallRequest
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest.server import serve_in_thread
from palimpsest_bench import recall_clients
from palimpsest_bench.common import HashEmbedder
from palimpsest_bench.recall_bench import (
    POOL,
    TOP_K,
    Progress,
    latency_stats,
    percentile,
    stderr,
)
from palimpsest_bench.recall_clients import SEARCH_GQL
from palimpsest_bench.recall_load import (
    AGENT,
    COUNT_EMBEDDED,
    ScopePlan,
    TextGen,
    cpu_steal_seconds,
    ensure_loaded,
    filtered_plan,
    latency_plan,
    load_average,
    stolen_since,
)
from palimpsest_bench.sql import GraphQLClient


@dataclass(slots=True)
class LegsOnlyPlan(RecallPlan):
    """The product's recall plan with its finish left out: the statistics, the full-text and
    vector legs in their two transactions, then only the rows the legs ranked counted (no
    fusion, boosts or final load)."""

    rows: int = 0

    async def finish(
        self, tx: Tx, lists: list[RankedList], question: cues.QuestionCues
    ) -> RecallResult:
        if self.spans:
            spans = self.spans
            timing.observe("legs", max(e for _, e in spans) - min(s for s, _ in spans))
        self.rows = sum(len(one.ranked.ids) for one in lists)
        return RecallResult(hits=[], scopes=[r.scope for r in self.refs])


async def raw_search(
    svc: Services, ref: ScopeRef, query: str, sources: frozenset[pure.Source]
) -> int:
    """The work of one ``search`` without the API: the product's own plan up to its legs
    (``LegsOnlyPlan``). Returns the rows the legs ranked."""
    request = RecallRequest(
        query=query,
        top_k=TOP_K,
        sources=sources,
        view=fr.time_view(svc, None, None),
        pool=POOL,
        levers=pure.Levers.of(svc.settings),
    )
    who = act_for_user(ref.tenant_id, ref.owner_id)
    with timing.timed("resolver"):
        plan = await LegsOnlyPlan.of(svc, who, [ref.scope], request)
        await plan.run()
    return plan.rows


async def _timed_raw(
    svc: Services, ref: ScopeRef, query: str, sources: frozenset[pure.Source]
) -> float:
    started = time.perf_counter()
    await raw_search(svc, ref, query, sources)
    return (time.perf_counter() - started) * 1000


@dataclass(slots=True)
class StageLog:
    """Stage figures the API observed (``recall_timing``), appended from its thread."""

    samples: list[tuple[str, float]] = field(default_factory=list)

    def __call__(self, stage: str, seconds: float) -> None:
        self.samples.append((stage, seconds * 1000))

    def since(self, mark: int) -> dict[str, float]:
        """Per stage, the milliseconds observed after ``mark`` (summed if several)."""
        out: dict[str, float] = {}
        for stage, ms in self.samples[mark:]:
            out[stage] = out.get(stage, 0.0) + ms
        return out


def stage_summary(per_query: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """p50 and p95 (ms) of each stage over the queries that ran it."""
    names = sorted({name for q in per_query for name in q})
    out: dict[str, dict[str, float]] = {}
    for name in names:
        values = [q[name] for q in per_query if name in q]
        out[name] = {
            "p50": round(percentile(values, 50), 2),
            "p95": round(percentile(values, 95), 2),
            "n": len(values),
        }
    return out


def query_picks(plans: Sequence[ScopePlan], n: int, count: int) -> list[tuple[ScopePlan, str]]:
    """Every other query asks the big scope, the rest a random other scope."""
    big = [p for p in plans if p.big] or [max(plans, key=lambda p: p.chunks)]
    small = [p for p in plans if p not in big]
    gen = TextGen(f"latency-queries-{n}")
    return [
        (big[0] if i % 2 == 0 or not small else gen.rng.choice(small), gen.query())
        for i in range(count)
    ]


async def run_latency(
    settings: Settings,
    n: int = 10_000,
    queries: int = 300,
    warmup: int = 30,
    say: Progress = stderr,
    synthetic: bool = False,
    clients: int = 1,
    dataset_kind: str = "latency",
    workers: int = 1,
) -> dict[str, Any]:
    """One client: every query timed through GraphQL and as raw work, with the API's stage
    figures. Several clients: the API as its own process (``workers`` uvicorn workers), each
    client one request at a time; throughput, latency percentiles and errors."""
    # No question cache: each timed query pays its embedding, as a new question would.
    settings = settings.replace(
        log_level="WARNING", rate_limit_per_second=0, embedding_cache_size=0
    )
    plans = (
        filtered_plan(n, synthetic) if dataset_kind == "filtered" else latency_plan(n, synthetic)
    )
    async with open_services(settings) as svc:
        loader = (
            replace(svc, embedder=HashEmbedder(svc.embedder.model_name, svc.embedder.dimensions))
            if synthetic
            else svc
        )
        dataset = await ensure_loaded(loader, plans, say)
        dataset["synthetic_vectors"] = synthetic
        dataset["plan"] = dataset_kind
        index_rows = (await svc.db.read(COUNT_EMBEDDED))[0]["n"]
        keys = load_keys(settings)
        tokens = {
            p.key: mint(keys, tenant=p.tenant, user=p.user, agent=AGENT, ttl_seconds=7200)
            for p in plans
        }
        picks = query_picks(plans, n, warmup + queries)
        if clients > 1:
            figures = await asyncio.to_thread(
                recall_clients.concurrent_run,
                settings,
                picks,
                tokens,
                warmup,
                clients,
                workers,
                say,
            )
        else:
            figures = await sequential_run(svc, settings, picks, tokens, warmup, say)
    small = [p for p in plans if not p.big]
    return {
        "benchmark": "recall-latency",
        "chunks": n,
        "queries": queries,
        "warmup": warmup,
        "top_k": TOP_K,
        "sources": sorted(s.value for s in pure.SEARCH_DEFAULT),
        **figures,
        "dataset": {
            **dataset,
            "tenants": sorted({p.tenant for p in plans}),
            "big_scope_chunks": max(p.chunks for p in plans),
            "small_scopes": len(small),
            "small_scope_chunks": [min(p.chunks for p in small), max(p.chunks for p in small)]
            if small
            else [],
            "index_rows": index_rows,
        },
        "cpus": os.cpu_count(),
    }


async def sequential_run(
    svc: Services,
    settings: Settings,
    picks: Sequence[tuple[ScopePlan, str]],
    tokens: Mapping[str, str],
    warmup: int,
    say: Progress,
) -> dict[str, Any]:
    sources = pure.SEARCH_DEFAULT
    say("starting the API (Neo4j, embedding model) ...")
    gql: dict[str, list[float]] = {"big": [], "small": []}
    raw: dict[str, list[float]] = {"big": [], "small": []}
    stages: list[dict[str, float]] = []
    log = StageLog()
    with serve_in_thread(settings) as url, timing.listening(log):
        client = GraphQLClient(url, tokens[picks[0][0].key])
        load_before = load_average()
        steal_before = cpu_steal_seconds()
        try:
            say(f"{warmup} warm-up and {len(picks) - warmup} measured queries ...")
            for i, (p, text) in enumerate(picks):
                # One keep-alive connection; each request carries its scope's own token.
                client.headers["Authorization"] = f"Bearer {tokens[p.key]}"
                # Alternate which goes first, so neither always meets the warmer caches.
                raw_first = (i // 2) % 2 == 1
                if raw_first:
                    raw_ms = await _timed_raw(svc, p.ref, text, sources)
                mark = len(log.samples)
                t0 = time.perf_counter()
                data = client.call(SEARCH_GQL, scope="USER", q=text, k=TOP_K)
                gql_ms = (time.perf_counter() - t0) * 1000
                seen = log.since(mark)
                if not raw_first:
                    raw_ms = await _timed_raw(svc, p.ref, text, sources)
                if not data["search"]["hits"]:
                    raise RuntimeError("a benchmark search returned nothing")
                if i >= warmup:
                    kind = "big" if p.big else "small"
                    gql[kind].append(gql_ms)
                    raw[kind].append(raw_ms)
                    # What neither the resolver nor the server's HTTP/GraphQL time explains:
                    # the loopback and the client's own work.
                    server = seen.get("resolver", 0.0) + seen.get("http_graphql", 0.0)
                    stages.append({**seen, "total": gql_ms, "client": max(0.0, gql_ms - server)})
                if (i + 1) % 100 == 0:
                    say(f"  {i + 1}/{len(picks)} queries")
        finally:
            client.close()
        load_after = load_average()
        stolen = stolen_since(steal_before)
    all_gql = gql["big"] + gql["small"]
    all_raw = raw["big"] + raw["small"]
    stats = latency_stats(all_gql)
    raw_stats = latency_stats(all_raw, "raw_")
    return {
        "clients": 1,
        **stats,
        **raw_stats,
        "overhead": round(stats["p95"] / raw_stats["raw_p95"], 3),
        "overhead_p50": round(stats["p50"] / raw_stats["raw_p50"], 3),
        "stages": stage_summary(stages),
        "by_scope": {
            kind: {
                "queries": len(gql[kind]),
                **latency_stats(gql[kind]),
                **latency_stats(raw[kind], "raw_"),
            }
            for kind in ("big", "small")
            if gql[kind]
        },
        "embedding_threads": settings.embedding.threads,
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        # CPU seconds the hypervisor took during the queries: runs on a virtual machine are
        # comparable only when this is small.
        "cpu_steal_s": stolen,
    }
