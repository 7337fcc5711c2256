"""``bench postings-sim``: measure first (docs/notes/search-latency.md, "What it would take:
impact-ordered postings per scope"). Per growth scope and query, in pure Python over the
scope's exact representations (``postings_corpus``):

(a) the rows holding the query's rarest term;
(b) the rows the product's full-text leg reads today (its own code: the text side's held
    rows, the covering read, or the rarest-terms-first MaxScore);
(c) the rows a block-max MaxScore reads over postings per (scope, term), split by impact
    ``tf (k1 + 1) / (tf + k1 (1 - b + b len / avgdl))`` into quantised levels (equal widths
    of ``[0, k1 + 1)``) and each level into blocks of at most ``cap`` rows in load order,
    each block with its rows' largest impact (and, as the best case of the design, every
    term's rows sorted by impact, in blocks of ``cap``: "sorted"); blocks are read in descending
    ``idf x max impact``, every row of a block is scored exactly, and the read stops once the
    unread blocks' best bounds, one per term, together fall below the pool's last score.

Both (b) and (c) are checked against the exhaustive scope-local BM25 pool (ties by id).
"""

from __future__ import annotations

import heapq
import resource
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import Scorer
from palimpsest_bench.postings_corpus import Corpus, Ids, growth_queries, product_leg, scope_reps
from palimpsest_bench.recall_bench import POOL, Progress, percentile, stderr
from palimpsest_bench.recall_growth import growth_plan, label
from palimpsest_bench.recall_load import ScopePlan

K1, B = 1.2, 0.75  # the settings' defaults (fulltext_k1, fulltext_b)
# (levels, rows per block at most); 0 levels: every row in impact order ("sorted").
VARIANTS = ((8, 2000), (16, 2000), (8, 500), (16, 500), (0, 2000), (0, 500), (0, 100))
# A hair below the threshold, as ``fulltext.covering_sets``: sums of floats round.
MARGIN = 1e-9


@dataclass(frozen=True, slots=True)
class Block:
    rows: Ids
    max_impact: float


def blocks_of(corpus: Corpus, term: str, levels: int, cap: int) -> list[Block]:
    """The term's postings, highest level first, each level in blocks of ``cap`` rows in
    load order; with no ``levels``, all its rows by impact (ties by id) in blocks of ``cap``."""
    rows, tf = corpus.postings[term]
    norm = K1 * (1.0 - B + B * corpus.lengths[rows] / corpus.stats.avg_length)
    impact = tf * (K1 + 1.0) / (tf + norm)
    if levels == 0:
        order = np.lexsort((rows, -impact))
        rows, impact = rows[order], impact[order]
        return [
            Block(rows[i : i + cap], float(impact[i : i + cap].max()))
            for i in range(0, len(rows), cap)
        ]
    level = np.minimum((impact * (levels / (K1 + 1.0))).astype(np.int64), levels - 1)
    out: list[Block] = []
    for lv in range(levels - 1, -1, -1):
        inside = level == lv
        members, impacts = rows[inside], impact[inside]
        for start in range(0, len(members), cap):
            part = slice(start, start + cap)
            out.append(Block(members[part], float(impacts[part].max())))
    return out


def stop_now(bounds: Sequence[float], threshold: float | None) -> bool:
    """No unread row can still enter the pool: it adds at most each term's best unread
    block's bound, and all of them together fall short of the pool's last score."""
    return threshold is not None and sum(bounds) < threshold * (1.0 - MARGIN)


@dataclass(frozen=True, slots=True)
class BlockRead:
    ids: list[str]
    scores: list[float]
    entries: int  # posting entries read (the blocks' rows)
    scored: int  # distinct rows scored
    blocks: int


Blocks = Callable[[str], list[Block]]


def block_max(
    corpus: Corpus,
    terms: Sequence[str],
    pool: int,
    blocks: Blocks,
    stop: Callable[[Sequence[float], float | None], bool] = stop_now,
) -> BlockRead:
    """The exact top-``pool`` by block-max MaxScore over the terms' impact blocks."""
    stats = corpus.stats
    scorer = Scorer.of(terms, stats, K1, B)
    present = sorted({t for t in terms if stats.df.get(t, 0) > 0})
    weight = {t: fulltext.idf(stats.rows, stats.df[t]) * (1.0 + MARGIN) for t in present}
    queues = {
        t: sorted(((weight[t] * b.max_impact, b) for b in blocks(t)), key=lambda x: -x[0])
        for t in present
    }
    heads = dict.fromkeys(present, 0)
    scores: dict[int, float] = {}
    best: list[float] = []  # the pool's scores so far, a min-heap
    entries = count = 0
    while True:
        left = [t for t in present if heads[t] < len(queues[t])]
        threshold = best[0] if len(best) == pool else None
        if not left or stop([queues[t][heads[t]][0] for t in left], threshold):
            break
        term = max(left, key=lambda t: (queues[t][heads[t]][0], t))
        block = queues[term][heads[term]][1]
        heads[term] += 1
        count += 1
        entries += len(block.rows)
        for r in block.rows.tolist():
            if r not in scores:
                s = scorer.score(corpus.ft[r], corpus.tf[r], int(corpus.lengths[r]))
                scores[r] = s
                if len(best) < pool:
                    heapq.heappush(best, s)
                elif s > best[0]:
                    heapq.heapreplace(best, s)
    ids, values = _pool(corpus, scores, pool)
    return BlockRead(ids, values, entries, len(scores), count)


def exhaustive(corpus: Corpus, terms: Sequence[str], pool: int) -> tuple[list[str], list[float]]:
    """Every row holding a query term scored: the pool, best first, ties by id."""
    scorer = Scorer.of(terms, corpus.stats, K1, B)
    rows = corpus.holding_any([t for t in terms if corpus.stats.df.get(t, 0) > 0])
    scores = {
        r: scorer.score(corpus.ft[r], corpus.tf[r], int(corpus.lengths[r])) for r in rows.tolist()
    }
    return _pool(corpus, scores, pool)


def _pool(corpus: Corpus, scores: dict[int, float], pool: int) -> tuple[list[str], list[float]]:
    top = heapq.nsmallest(pool, scores, key=lambda r: (-scores[r], corpus.ids[r]))
    return [corpus.ids[r] for r in top], [scores[r] for r in top]


def figures(values: Iterable[float]) -> dict[str, float]:
    got = list(values)
    return {
        "p50": round(percentile(got, 50), 1),
        "p95": round(percentile(got, 95), 1),
        "max": round(max(got), 1),
    }


async def measure_scope(
    corpus: Corpus, plan: ScopePlan, queries: Sequence[str], pool: int, say: Progress
) -> dict[str, Any]:
    """Per query (a), (b) and (c) in every variant, each pool checked; their figures."""
    cached: dict[tuple[int, int, str], list[Block]] = {}

    def blocks_for(levels: int, cap: int) -> Blocks:
        def get(term: str) -> list[Block]:
            key = (levels, cap, term)
            if key not in cached:
                cached[key] = blocks_of(corpus, term, levels, cap)
            return cached[key]

        return get

    rarest: list[float] = []
    leg_rows: list[float] = []
    leg_reads: list[float] = []
    held = 0
    runs: dict[str, list[BlockRead]] = {_name(lv, cap): [] for lv, cap in VARIANTS}
    for n, query in enumerate(queries):
        terms = fulltext.query_terms(query, True)
        present = [t for t in terms if corpus.stats.df.get(t, 0) > 0]
        want = exhaustive(corpus, terms, pool)
        leg = await product_leg(corpus, plan.ref, terms, pool, K1, B)
        if (leg.ids, leg.scores) != want:
            raise AssertionError(f"the product's leg missed the exact pool of {query!r}")
        rarest.append(min((corpus.stats.df[t] for t in present), default=0))
        leg_rows.append(leg.rows)
        leg_reads.append(leg.reads)
        held += leg.held
        for (levels, cap), name in zip(VARIANTS, runs, strict=True):
            got = block_max(corpus, terms, pool, blocks_for(levels, cap))
            if (got.ids, got.scores) != want:
                raise AssertionError(f"block-max {name} missed the exact pool of {query!r}")
            runs[name].append(got)
        if (n + 1) % 50 == 0:
            say(f"  {n + 1}/{len(queries)} queries")
    out: dict[str, Any] = {
        "rarest_term_rows": figures(rarest),
        "covering_rows_read": figures(leg_rows),
        "covering_reads": figures(leg_reads),
        "held_queries": held,
        "block_max": {},
    }
    for name, reads in runs.items():
        entries = [g.entries for g in reads]
        share = [e / max(c, 1) for e, c in zip(entries, leg_rows, strict=True)]
        out["block_max"][name] = {
            "rows_read": figures(entries),
            "rows_scored": figures(g.scored for g in reads),
            "blocks_read": figures(g.blocks for g in reads),
            "share_of_covering_total": round(sum(entries) / max(sum(leg_rows), 1), 3),
            "share_of_covering_per_query": {
                "p50": round(percentile(share, 50), 3),
                "p95": round(percentile(share, 95), 3),
            },
        }
    return out


async def run_sim(
    sizes: Sequence[int],
    queries: int,
    warmup: int,
    tenant: str,
    pool: int = POOL,
    say: Progress = stderr,
) -> dict[str, Any]:
    by_size: dict[str, Any] = {}
    for plan in growth_plan(sizes, tenant=tenant):
        started = time.perf_counter()
        say(f"size {plan.chunks}: building the scope's representations ...")
        corpus = Corpus.of(scope_reps(plan))
        built = time.perf_counter() - started
        say(f"size {plan.chunks}: {queries} queries ...")
        row = await measure_scope(
            corpus, plan, growth_queries(plan.chunks, queries, warmup), pool, say
        )
        by_size[label(plan.chunks)] = {
            "scope_rows": plan.chunks,
            "avg_length": round(corpus.stats.avg_length, 2),
            "terms": len(corpus.stats.df),
            **row,
            "build_seconds": round(built, 1),
            "measure_seconds": round(time.perf_counter() - started - built, 1),
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        }
    return {
        "benchmark": "postings-sim",
        "tenant": tenant,
        "queries": queries,
        "warmup_skipped": warmup,
        "pool": pool,
        "k1": K1,
        "b": B,
        "variants": {_name(lv, cap): _meaning(lv, cap) for lv, cap in VARIANTS},
        "by_size": by_size,
    }


def _name(levels: int, cap: int) -> str:
    return f"{levels or 'sorted'}x{cap}"


def _meaning(levels: int, cap: int) -> str:
    if levels == 0:
        return f"each term's rows sorted by impact, blocks of {cap} rows"
    return f"{levels} impact levels, blocks of at most {cap} rows in load order"
