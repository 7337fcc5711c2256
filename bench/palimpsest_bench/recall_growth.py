"""``bench recall-latency --growth``: the cost curve of a scoped ``search`` with scope size.

One database holds one USER scope per size (``growth_plan``: tenant ``bench-growth[-synth]``,
user ``rows-<size>``, exactly ``size`` chunks each), so every size is searched against the
same index, as the million-chunk dataset is; a size's scope is kept between runs and loaded
once (``ensure_loaded``), so adding a larger size later loads only that scope. Per size, the
scope's own queries through GraphQL over HTTP interleaved with the raw work
(``recall_latency.sequential_run``: p50/p95, stage timings), the stage that dominates, and the
filtered top-10 overlap against the exact oracle at default settings
(``recall_bench.scope_overlap``) and the rows the index cannot reach (``ann_reach``). The
curve is written as a PNG (``growth_plot``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher.extension import Engine
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.runtime import open_services
from palimpsest_bench import ann_reach, recall_bench, recall_engines, recall_latency
from palimpsest_bench.common import HashEmbedder
from palimpsest_bench.recall_bench import Progress, stderr
from palimpsest_bench.recall_load import (
    AGENT,
    COUNT_EMBEDDED,
    ScopePlan,
    TextGen,
    ensure_loaded,
    load_average,
)

DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
# The stages a search spends its time in, one level down from the whole resolver: the
# statistics read, the query's embedding, each leg, fusion and the final load.
LEAF_STAGES = ("stats", "embedding", "fusion", "load")
# Rows per size asked for by their own vector (``ann_reach``): the index's unreachable rows.
REACH_SAMPLE = 2000


def growth_plan(
    sizes: Sequence[int], synthetic: bool = False, tenant: str | None = None
) -> list[ScopePlan]:
    """One scope of exactly ``size`` chunks per size, all in one tenant (by default
    ``bench-growth``, ``bench-growth-synth`` with synthetic vectors); a scope depends only on
    its size, so runs with other sizes share it. Smallest first."""
    if not sizes or min(sizes) < 1:
        raise ValueError("sizes must be positive")
    tenant = tenant or ("bench-growth-synth" if synthetic else "bench-growth")
    return [
        ScopePlan(tenant, f"rows-{size}", size, big=size == max(sizes))
        for size in sorted(set(sizes))
    ]


def parse_sizes(text: str) -> list[int]:
    """``"1000,10k,1M"`` -> ``[1000, 10000, 1000000]``."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        scale = {"k": 1_000, "m": 1_000_000}.get(part[-1], 1)
        number = part[:-1] if scale > 1 else part
        if not number.isdigit() or int(number) * scale < 1:
            raise ValueError(f"not a size: {part!r}")
        out.append(int(number) * scale)
    if not out:
        raise ValueError("no sizes given")
    return sorted(set(out))


def label(size: int) -> str:
    """``1000`` -> ``"1k"``, ``1000000`` -> ``"1M"``, other sizes as they are."""
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1_000 and size % 1_000 == 0:
        return f"{size // 1_000}k"
    return str(size)


def dominant_stage(stages: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The leaf stage (a leg, the statistics, the embedding, fusion, the load) with the
    largest p50, and its share of the resolver's p50."""
    leaves = {
        name: figures
        for name, figures in stages.items()
        if name in LEAF_STAGES or name.startswith(("vector_", "fulltext_"))
    }
    if not leaves:
        return {}
    name = max(leaves, key=lambda n: leaves[n]["p50"])
    resolver = stages.get("resolver", {}).get("p50", 0.0)
    return {
        "stage": name,
        "p50": leaves[name]["p50"],
        "p95": leaves[name]["p95"],
        "share_of_resolver_p50": round(leaves[name]["p50"] / resolver, 3) if resolver else None,
    }


def engine_figures(compared: Mapping[str, Any], engine: str) -> dict[str, Any]:
    """The figures a size's row and the curve read, from one engine of an interleaved run
    (the raw work is not run there: its columns are the search's own)."""
    mine = compared["by_engine"][engine]
    return {
        "p50": mine["p50"],
        "p95": mine["p95"],
        "p99": mine["p99"],
        "raw_p50": mine["p50"],
        "raw_p95": mine["p95"],
        "overhead": None,
        "stages": mine["stages"],
        "load_avg_before": compared["load_avg_before"],
        "load_avg_after": compared["load_avg_after"],
        "cpu_steal_s": compared["cpu_steal_s"],
    }


def picks_for(plan: ScopePlan, count: int) -> list[tuple[ScopePlan, str]]:
    gen = TextGen(f"growth-queries-{plan.chunks}")
    return [(plan, gen.query()) for _ in range(count)]


async def run_growth(
    settings: Settings,
    sizes: Sequence[int] = DEFAULT_SIZES,
    queries: int = 100,
    warmup: int = 20,
    overlap_queries: int = 30,
    synthetic: bool = False,
    out_dir: Path = Path("bench-results"),
    say: Progress = stderr,
    tenant: str | None = None,
    engines: Sequence[Engine] = (),
) -> dict[str, Any]:
    """Load (or reuse) one scope per size, then per size: latency and stages over
    ``queries`` searches of that scope (after ``warmup``), and the overlap of
    ``overlap_queries`` against the exact oracle. Writes ``growth.png`` under ``out_dir``.
    With ``engines``, each size's searches run on each full-text engine in turn
    (``recall_engines``) instead of beside the raw work, and the curve is the first
    engine's."""
    settings = settings.replace(
        log_level="WARNING", rate_limit_per_second=0, embedding_cache_size=0
    )
    plans = growth_plan(sizes, synthetic, tenant)
    by_size: dict[str, Any] = {}
    async with open_services(settings) as svc, contextlib.AsyncExitStack() as stack:
        hashed = replace(
            svc, embedder=HashEmbedder(svc.embedder.model_name, svc.embedder.dimensions)
        )
        dataset = await ensure_loaded(hashed if synthetic else svc, plans, say)
        dataset["synthetic_vectors"] = synthetic
        index_rows = int((await svc.db.read(COUNT_EMBEDDED))[0]["n"])
        keys = load_keys(settings)
        urls: dict[Engine, str] = {}
        if engines:
            say(f"starting one API per engine ({', '.join(engines)}) ...")
            urls = stack.enter_context(recall_engines.engine_servers(settings, engines))
        for p in plans:
            say(f"size {p.chunks}: latency ...")
            token = mint(keys, tenant=p.tenant, user=p.user, agent=AGENT, ttl_seconds=7200)
            picks = picks_for(p, warmup + queries)
            compared: dict[str, Any] = {}
            if engines:
                compared = await recall_engines.interleaved_run(
                    svc, urls, engines, picks, {p.key: token}, warmup, say
                )
                figures = engine_figures(compared, engines[0])
            else:
                figures = await recall_latency.sequential_run(
                    svc, settings, picks, {p.key: token}, warmup, say
                )
            say(f"size {p.chunks}: overlap against the exact oracle ...")
            started = time.perf_counter()
            judge = hashed if synthetic else svc
            gen = TextGen(f"growth-overlap-{p.chunks}")
            texts = [gen.query() for _ in range(overlap_queries)]
            vectors = await judge.embed(texts)
            quality = await recall_bench.scope_overlap(judge, p, texts, vectors)
            reach = await ann_reach.unreachable(svc.db.scoped(p.ref), REACH_SAMPLE)
            by_size[label(p.chunks)] = {
                "scope_chunks": p.chunks,
                "p50": figures["p50"],
                "p95": figures["p95"],
                "p99": figures["p99"],
                "raw_p50": figures["raw_p50"],
                "raw_p95": figures["raw_p95"],
                "overhead": figures["overhead"],
                "dominant_stage": dominant_stage(figures["stages"]),
                "stages": figures["stages"],
                **quality,
                **reach,
                "overlap_seconds": round(time.perf_counter() - started, 1),
                "load_avg_before": figures["load_avg_before"],
                "load_avg_after": figures["load_avg_after"],
                "cpu_steal_s": figures["cpu_steal_s"],
                **compared,
            }
            row = by_size[label(p.chunks)]
            say(f"  {label(p.chunks)}: p50 {row['p50']} p95 {row['p95']} ms, {row['overlap']}")
            if engines:
                say(f"  {label(p.chunks)}: {row['ratios']}, pools {row['identical_pools']}")
    from palimpsest_bench.growth_plot import write_curve

    png = write_curve(by_size, out_dir / "growth.png", synthetic)
    return {
        "benchmark": "recall-latency-growth",
        "sizes": [p.chunks for p in plans],
        "queries": queries,
        "warmup": warmup,
        "overlap_queries": overlap_queries,
        "engines": list(engines),
        "top_k": recall_bench.TOP_K,
        "by_size": by_size,
        "plot": str(png),
        "dataset": {**dataset, "tenant": plans[0].tenant, "index_rows": index_rows},
        "load_avg": load_average(),
    }
