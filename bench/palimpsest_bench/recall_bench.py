"""Recall benchmarks: filtered-recall quality and ingest rate (issue 4, item 5); shared helpers.

Datasets and loading are in ``recall_load.py``, the latency benchmark in ``recall_latency.py``.

- ``filtered-recall``: tenant ``bench-filtered-<N>`` (kept) with USER scopes of exactly
  0.01 %, 0.1 %, 1 %, 10 % and 100 % of N chunks. For each scope and query, top-10 ids of the
  production vector leg (``recall`` in vector mode, the code the API runs) against an exact
  in-scope search (``EXACT_CHUNKS``, brute-force cosine over the scope); also the production
  hybrid top-10 against RRF of the exact vector pool and the full-text pool, and the bare
  in-index ANN (``VECTOR_CHUNKS`` alone, no fallback) to show what the fallback adds.
  ``share_of_index`` is each scope's share of all embedded chunks in the database, which
  includes other tenants' rows. With ``synthetic`` (tenant ``bench-filtered-synth-<N>``) rows
  and queries are both embedded by ``HashEmbedder``, so a million rows load at database speed
  and the overlap is still measured between vectors of one kind.
- ``ingest``: a fresh tenant (erased afterwards); per document, interleaved so both see the
  same machine: embedding only (``Services.embed`` on the document's chunk texts, the batch
  ``import_document`` makes) and the full ``import_document``. ``ratio`` =
  chunks_per_s / embed_only_per_s.

Only the pure helpers (percentiles, overlap, plans, text generation) are unit tested; figures
are measured, never asserted.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.cypher import recall as q
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.domain.documents import markdown
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope, ScopeRef
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.facts import ledger as fr
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.recall import planner as rr
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest_bench import exact_local
from palimpsest_bench.common import HashEmbedder, principal
from palimpsest_bench.recall_load import (
    AGENT,
    COUNT_EMBEDDED,
    MAX_DOC_CHUNKS,
    SHARES,
    ScopePlan,
    TextGen,
    documents_for,
    ensure_loaded,
    erase_scope,
    filtered_plan,
    load_average,
)
from palimpsest_suites.figures import percentile as percentile

Progress = Callable[[str], None]


def stderr(message: str) -> None:
    print(message, file=sys.stderr)


TOP_K = 10
BULK_DOCS = 20  # documents per import_documents call in the ingest benchmark
# The resolver's default pool for topK 10, and what its approximate search is asked for.
POOL = min(2 * TOP_K, rr.MAX_POOL)
LOCAL_EXACT_ABOVE = 50_000  # synthetic scopes larger than this: exact search with numpy

# -- pure helpers -------------------------------------------------------------------------


def overlap(found: Sequence[str], exact: Sequence[str], k: int = TOP_K) -> float:
    """Share of the exact top-k that the search found in its own top-k; 1.0 when both are empty.

    The denominator is the exact list's length (a scope smaller than k has fewer true hits).
    """
    truth = list(dict.fromkeys(exact[:k]))
    if not truth:
        return 1.0 if not found else 0.0
    return len(set(found[:k]) & set(truth)) / len(truth)


def latency_stats(ms: Sequence[float], prefix: str = "") -> dict[str, float]:
    return {
        f"{prefix}p50": round(percentile(ms, 50), 2),
        f"{prefix}p95": round(percentile(ms, 95), 2),
        f"{prefix}p99": round(percentile(ms, 99), 2),
        f"{prefix}mean": round(sum(ms) / len(ms), 2),
    }


# -- (b) filtered-recall quality ------------------------------------------------------------


def ids_of(rows: list[dict[str, Any]]) -> list[str]:
    """The ids of a leg's answer (one record of parallel lists, best first)."""
    return list(rows[0]["ids"]) if rows else []


async def bm25_pool(
    svc: Services, ref: ScopeRef, text: str, levers: pure.Levers, base: dict[str, Any]
) -> list[str]:
    """The production BM25 leg's pool for ``text`` (exact: scope-local MaxScore)."""
    docs = [pure.Source.DOCUMENTS]
    terms = fulltext.query_terms(text, levers.question_words)

    async def work(tx: ScopedTx) -> list[str]:
        st = (await legs.read_stats(tx, docs, terms, False)).of(docs[0])
        ranked = await legs.fulltext_leg(tx, docs[0], terms, st, POOL, base, levers.k1, levers.b)
        return ranked.ids

    return await svc.db.scoped(ref).read_tx(work)


async def scope_overlap(
    svc: Services, p: ScopePlan, texts: Sequence[str], vectors: Sequence[Sequence[float]]
) -> dict[str, Any]:
    """Mean top-10 overlap over the queries (``texts``, embedded as ``vectors``) of scope
    ``p`` at the settings' defaults: the production vector leg against the exact in-scope
    search, the production hybrid against RRF of the exact pools, the bare in-index ANN."""
    settings = svc.settings
    rrf_k = settings.recall.rrf_k
    view = fr.time_view(svc, None, None)
    docs_only = frozenset({pure.Source.DOCUMENTS})
    levers = pure.Levers.of(settings)
    ann_ask = max(POOL, levers.ann_floor)
    who = principal(p.tenant, p.user, AGENT)
    sums = {"vector": 0.0, "hybrid": 0.0, "ann_only": 0.0}
    short = 0
    # A million-row scope takes minutes per Cypher scan: with synthetic vectors the same
    # exact search runs here, over the vectors rebuilt from the scope's texts.
    local: list[list[str]] = []
    if isinstance(svc.embedder, HashEmbedder) and p.chunks > LOCAL_EXACT_ABOVE:
        stderr(f"  exact top-{POOL} of {p.chunks} rows, all queries, with numpy ...")
        local = await exact_local.exact_top(svc.db.scoped(p.ref), svc.embedder, vectors, POOL)
    for qi, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        db = svc.db.scoped(p.ref)
        # The time view's parameters too: the legs' statements read what a hit shows.
        base = {"vector": vector, "prefix": "", "now": svc.clock(), **view.params()}
        exact_ids = (
            local[qi] if local else ids_of(await db.read(q.EXACT_CHUNKS, {**base, "k": POOL}))
        )
        ann_ids = ids_of(await db.read(q.VECTOR_CHUNKS, {**base, "k": ann_ask}))
        if len(ann_ids) < min(ann_ask, p.chunks):
            short += 1
        # The BM25 leg is exact by construction (scope-local MaxScore).
        ft = await bm25_pool(svc, p.ref, text, levers, base)
        # As the resolver fuses: a row one pool missed ranks just past its depth there.
        depth = POOL if levers.absent_at_depth else None
        fused = pure.rrf({"vector": exact_ids, "fulltext": ft}, k=rrf_k, depth=depth)
        exact_hybrid = [f.id for f in fused]
        results = {}
        for mode in (rr.Mode.VECTOR, rr.Mode.HYBRID):
            req = rr.RecallRequest(
                query=text,
                top_k=TOP_K,
                sources=docs_only,
                view=view,
                mode=mode,
                rrf_k=rrf_k,
                levers=levers,
            )
            got = await rr.recall(svc, who, [Scope.USER], req)
            results[mode] = [h.id for h in got.hits]
        sums["vector"] += overlap(results[rr.Mode.VECTOR], exact_ids)
        sums["hybrid"] += overlap(results[rr.Mode.HYBRID], exact_hybrid)
        sums["ann_only"] += overlap(ann_ids, exact_ids)
    n = max(len(texts), 1)
    return {
        "overlap": round(sums["vector"] / n, 4),
        "overlap_hybrid": round(sums["hybrid"] / n, 4),
        "overlap_ann_only": round(sums["ann_only"] / n, 4),
        "ann_short_reads": short,
        "exact_by": "numpy" if local else "cypher",
    }


async def run_filtered(
    settings: Settings,
    n: int = 10_000,
    queries: int = 50,
    say: Progress = stderr,
    synthetic: bool = False,
) -> dict[str, Any]:
    # No question cache: each timed query pays its embedding, as a new question would.
    settings = settings.replace(log_level="WARNING", embedding_cache_size=0)
    plans = filtered_plan(n, synthetic)
    async with open_services(settings) as real:
        svc = (
            replace(real, embedder=HashEmbedder(real.embedder.model_name, real.embedder.dimensions))
            if synthetic
            else real
        )
        dataset = await ensure_loaded(svc, plans, say)
        dataset["synthetic_vectors"] = synthetic
        index_rows = int((await svc.db.read(COUNT_EMBEDDED))[0]["n"])
        gen = TextGen(f"filtered-queries-{n}")
        texts = [gen.query() for _ in range(queries)]
        vectors = await svc.embed(texts)
        levers = pure.Levers.of(settings)
        by_share: dict[str, Any] = {}
        started = time.perf_counter()
        for share, p in zip(SHARES, plans, strict=True):
            label = f"{share:g}%"
            by_share[label] = {
                "scope_chunks": p.chunks,
                "share_of_index": round(p.chunks / max(index_rows, 1), 6),
                **await scope_overlap(svc, p, texts, vectors),
            }
            say(f"  {label} ({p.chunks} chunks): {by_share[label]}")
    worst = min(v["overlap"] for v in by_share.values())
    return {
        "benchmark": "filtered-recall",
        "chunks": n,
        "queries": queries,
        "top_k": TOP_K,
        "pool": POOL,
        "ann_floor": levers.ann_floor,
        "overlap": {k: v["overlap"] for k, v in by_share.items()},
        "overlap_hybrid": {k: v["overlap_hybrid"] for k, v in by_share.items()},
        "min_overlap": worst,
        "by_share": by_share,
        "dataset": {**dataset, "tenant": plans[0].tenant, "index_rows": index_rows},
        "seconds": round(time.perf_counter() - started, 1),
        "load_avg": load_average(),
    }


# -- (c) ingest throughput ----------------------------------------------------------------


async def run_ingest(settings: Settings, n: int = 2000, say: Progress = stderr) -> dict[str, Any]:
    settings = settings.replace(log_level="WARNING")
    tenant = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    plan = ScopePlan(tenant, "ingest", n)
    who = principal(tenant, plan.user, AGENT)
    documents = list(documents_for(plan))
    warm = list(documents_for(ScopePlan(tenant, "warmup", 2 * MAX_DOC_CHUNKS)))
    async with open_services(settings) as svc:
        try:
            say("warm-up ...")
            for text, _ in warm:
                await svc.embed([c.text for c in markdown.parse(text).chunks])
                await importer.import_document(svc, who, Scope.USER, text, None, None, None)
            await erase_scope(svc, plan.ref)
            load_before = load_average()
            say(f"{len(documents)} documents, {n} chunks: embed-only and import_document ...")
            embed_s = ingest_s = parse_s = 0.0
            for i, (text, size) in enumerate(documents):
                t0 = time.perf_counter()
                parsed = await anyio.to_thread.run_sync(markdown.parse, text)
                t1 = time.perf_counter()
                vectors = await svc.embed([c.text for c in parsed.chunks])
                t2 = time.perf_counter()
                await importer.import_document(
                    svc, who, Scope.USER, text, None, f"/bench/{i}.md", None
                )
                t3 = time.perf_counter()
                if len(vectors) != size:
                    raise RuntimeError(f"document {i} parsed into {len(vectors)} chunks")
                parse_s += t1 - t0
                embed_s += t2 - t1
                ingest_s += t3 - t2
                if (i + 1) % 20 == 0:
                    say(f"  {i + 1}/{len(documents)} documents")
            await erase_scope(svc, plan.ref)
            say(f"the same documents in batches of {BULK_DOCS} through import_documents ...")
            bulk_embed_s = bulk_s = 0.0
            for start in range(0, len(documents), BULK_DOCS):
                batch = documents[start : start + BULK_DOCS]
                texts = [c.text for text, _ in batch for c in markdown.parse(text).chunks]
                t0 = time.perf_counter()
                await svc.embed(texts)
                t1 = time.perf_counter()
                drafts = [importer.DocumentDraft(text) for text, _ in batch]
                await importer.import_documents(svc, who, Scope.USER, drafts)
                bulk_embed_s += t1 - t0
                bulk_s += time.perf_counter() - t1
            load_after = load_average()
        finally:
            await erase_scope(svc, plan.ref)
    chunks_per_s = n / bulk_s
    embed_per_s = n / bulk_embed_s
    one_per_s = n / ingest_s
    one_embed_per_s = n / embed_s
    return {
        "benchmark": "ingest",
        "chunks": n,
        "documents": len(documents),
        "batch_documents": BULK_DOCS,
        "chunks_per_s": round(chunks_per_s, 1),
        "embed_only_per_s": round(embed_per_s, 1),
        "ratio": round(chunks_per_s / embed_per_s, 3),
        "one_by_one": {
            "chunks_per_s": round(one_per_s, 1),
            "embed_only_per_s": round(one_embed_per_s, 1),
            "ratio": round(one_per_s / one_embed_per_s, 3),
        },
        "seconds": {
            "import_documents": round(bulk_s, 2),
            "embed_only_batched": round(bulk_embed_s, 2),
            "import_document": round(ingest_s, 2),
            "embed_only": round(embed_s, 2),
            "parse_only": round(parse_s, 2),
        },
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "cpus": os.cpu_count(),
    }
