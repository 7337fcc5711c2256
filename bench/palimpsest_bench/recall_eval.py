"""Retrieval quality: LoCoMo, SciFact and TimeQA through the real ingest and recall paths.

Each run loads one dataset into a fresh tenant of the configured Neo4j (the one the running
server uses) with ``import_document`` (the resolver behind GraphQL ``importDocument``: Markdown
parsed into chunks, one embedding batch per document), asks every query with
``resolvers.recall.recall`` (the resolver behind GraphQL ``recall``/``search``) over
``sources={documents}`` in one mode (vector, fulltext or hybrid), scores the ranked hits and
returns one JSON-ready dict. The tenant's documents are deleted afterwards unless ``keep``.

Mappings (``../shared/eval/README.md``):

- LoCoMo: one user per conversation (``sample_id``) in one tenant; each session is a Document
  observed at its ``observed_at`` (naive timestamps are read as UTC) and each turn is exactly
  one paragraph chunk, ``"<speaker>: <text>"``. A hit is a chunk whose ``dia_id`` is in the
  question's ``evidence``. recall@k is "any evidence turn in the top k". Headline metrics average
  the questions of categories 1-4; ``by_category`` has all five (5 = adversarial).
- SciFact: one Document per abstract (the title as its title and as a level-1 heading chunk,
  the abstract as one paragraph chunk); a chunk hit counts for its document, first occurrence
  wins. nDCG@10 as BEIR (binary gains from ``qrels.tsv``) and recall@100 as BEIR's fraction of
  relevant documents found (the resolver serves top_k up to 200; the GraphQL API caps it at 50).
- TimeQA: one Document per Wikipedia page, one paragraph chunk per paragraph, all pages in one
  scope; a hit is a relevant paragraph. nDCG@10 and MRR@10.

Malformed records are skipped and counted (``recall_data.py``), as are documents the API
refuses; the JSON reports them as ``malformed`` (``"<file>: <reason>"``).

Units become single-paragraph Markdown blocks: whitespace runs collapse to one space and a unit
that Markdown would read as something else (a list item, heading, fence, quote, HTML) gets its
first marker backslash-escaped. The loader checks that the parsed document has exactly one
chunk per unit, in order, with the expected text, and maps chunk ids to unit ids by position.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.domain.ranking.fusion import Levers, Source, parse_window
from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.errors import InvalidArgument
from palimpsest.resolvers.facts.ledger import time_view
from palimpsest.resolvers.recall.planner import Mode, RecallRequest, recall
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services as services
from palimpsest_bench import harvest_ingest
from palimpsest_bench.common import QUERY_CONCURRENCY, gather_limited, principal
from palimpsest_bench.embed_cache import CachedEmbedder
from palimpsest_bench.recall_data import LOADERS, Dataset, Query
from palimpsest_bench.recall_ingest import SCOPE, Loaded, Progress, erase, ingest
from palimpsest_bench.recall_metrics import dedupe, score
from palimpsest_bench.recall_summary import HEADLINE_CATEGORIES, summarise

DATASETS = ("locomo", "scifact", "timeqa")
DEFAULT_TOP_K = {"locomo": 10, "scifact": 100, "timeqa": 10}
VIAS = ("import", "harvest")


# -- running against the database ---------------------------------------------------------


def request(
    svc: Services, q: Query, mode: Mode, top_k: int, pool: int | None, levers: Levers | None
) -> RecallRequest:
    """The recall a question is asked with: documents only, the settings' fusion."""
    return RecallRequest(
        query=q.text,
        top_k=top_k,
        sources=frozenset({Source.DOCUMENTS}),
        view=time_view(svc, None, None),
        rrf_k=svc.settings.recall.rrf_k,
        pool_factor=svc.settings.recall.pool_factor,
        vector_weight=svc.settings.recall.rrf_vector_weight,
        fulltext_weight=svc.settings.recall.rrf_fulltext_weight,
        mode=mode,
        pool=pool,
        levers=levers or Levers.of(svc.settings),
        # Asked right after the conversation: its relative dates count from then, a window
        # that keeps every turn of it (all observed by then) in place.
        window=parse_window(None, parse_optional(q.asked_at, "asked_at"), None, None),
    )


async def ranked_units(
    svc: Services,
    tenant: str,
    ds: Dataset,
    loaded: Loaded,
    q: Query,
    mode: Mode,
    top_k: int,
    pool: int | None,
    levers: Levers | None = None,
) -> list[str]:
    req = request(svc, q, mode, top_k, pool, levers)
    result = await recall(svc, principal(tenant, q.owner), [SCOPE], req)
    if ds.by_document:
        return dedupe(loaded.unit_of_document[h.document_id or ""] for h in result.hits)
    return [loaded.unit_of_chunk[h.id] for h in result.hits]


# Query-time levers, each removed in turn by ``--ablate`` (the neighbourhood lever is an
# ingest-time one: it is ablated by loading the dataset again without it).
ABLATIONS: dict[str, dict[str, Any]] = {
    "question_words": {"question_words": False},
    "speaker_strip": {"speaker_strip": False},
    "speaker_boost": {"speaker_boost": 1.0},
    "date_boost": {"date_boost": 1.0},
    "when_boost": {"when_boost": 1.0},
    "year_boost": {"year_boost": 1.0},
    "time_ranges": {"time_boost": 1.0, "time_when_boost": 1.0, "time_span_boost": 1.0},
    "time_boost": {"time_boost": 1.0},
    "time_when_boost": {"time_when_boost": 1.0},
    "time_span_boost": {"time_span_boost": 1.0},
    "absent_at_depth": {"absent_at_depth": False},
    # Off by default (it did not pay on dev): measure it with PALIMPSEST_RECALL_SESSION_PRIOR=1.
    "session_prior": {"session_prior": 0.0},
    # Off by default (adversarial recall fell): measure with PALIMPSEST_RECALL_QUESTION_FORMS=1.
    "question_forms": {"question_forms": False},
    # Off by default too: measure it with PALIMPSEST_RECALL_ENTITY_WEIGHT=0.5.
    "entities": {"entity_weight": 0.0},
    # Measure with PALIMPSEST_RECALL_NEWER_FIRST=<cosine> when it is off by default.
    "newer_first": {"newer_first": 0.0},
    # Newer first on every near pair, not only those that read as revisions.
    "newer_revision": {"newer_revision": False},
}
# Levers written at ingest: the dataset is loaded again with each switched off.
INGEST_ABLATIONS: dict[str, dict[str, Any]] = {
    "neighbours": {"fulltext_neighbours": False},
    # The neighbourhood for long chunks too (no limit on a chunk's terms).
    "neighbours_max_terms": {"fulltext_neighbours_max_terms": 0},
    "fulltext_context": {"fulltext_context": False},
}
HEADLINE: dict[str, tuple[str, ...]] = {
    "locomo": ("recall@10", "ndcg@10"),
    "scifact": ("ndcg@10",),
    "timeqa": ("ndcg@10",),
    "beam": ("recall_any@10", "recall_all@10", "ndcg@10"),
}


async def answer_all(
    svc: Services,
    tenant: str,
    ds: Dataset,
    loaded: Loaded,
    mode: Mode,
    top_k: int,
    pool: int | None,
    levers: Levers | None = None,
) -> list[list[str]]:
    jobs = [
        partial(ranked_units, svc, tenant, ds, loaded, q, mode, top_k, pool, levers)
        for q in ds.queries
    ]
    rankings: list[list[str]] = await gather_limited(jobs, QUERY_CONCURRENCY)
    return rankings


def headline(ds: Dataset, rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    per_query = [
        (q, score(ds.name, ranked, q.relevant))
        for q, ranked in zip(ds.queries, rankings, strict=True)
    ]
    metrics, _ = summarise(ds, per_query)
    return {name: metrics[name] for name in HEADLINE[ds.name]}


async def ablation_rankings(
    svc: Services,
    tenant: str,
    ds: Dataset,
    loaded: Loaded,
    mode: Mode,
    top_k: int,
    pool: int | None,
    progress: Progress,
    reload: bool = True,
) -> dict[str, list[list[str]]]:
    """The rankings with each lever removed in turn (``--ablate``, ``--folds``): ``-<lever>``.
    ``reload`` False leaves out the ingest-time levers (each loads the dataset again)."""
    full = Levers.of(svc.settings)
    table: dict[str, list[list[str]]] = {}
    for lever, change in ABLATIONS.items():
        table[f"-{lever}"] = await answer_all(
            svc, tenant, ds, loaded, mode, top_k, pool, replace(full, **change)
        )
        progress(f"  without {lever}: {headline(ds, table[f'-{lever}'])}")
    reloaded: dict[str, dict[str, Any]] = INGEST_ABLATIONS if reload else {}
    for lever, change in reloaded.items():
        if not all(svc.settings.value(k) for k in change):
            continue  # already off: the full ranking is the one without it
        plain = replace(svc, settings=svc.settings.replace(**change))
        other = f"{tenant}-no-{lever}"
        progress(f"  loading again without {lever} (tenant {other})")
        again = Loaded()
        try:
            again = await ingest(plain, other, ds, progress)
            table[f"-{lever}"] = await answer_all(plain, other, ds, again, mode, top_k, pool, full)
            progress(f"  without {lever}: {headline(ds, table[f'-{lever}'])}")
        finally:
            await erase(plain, other, again)
    return table


def _malformed(ds: Dataset, loaded: Loaded) -> dict[str, int]:
    """Malformed records of the dataset files, and documents the API refused."""
    found = dict(ds.malformed)
    if loaded.refused:
        found["documents: refused by importDocument"] = loaded.refused
    return found


def subsample(ds: Dataset, docs: int) -> Dataset:
    """The first ``docs`` documents, and the queries whose relevant units all lie in them (a
    quicker, indicative run: its figures are not the dataset's)."""
    kept = ds.docs[:docs]
    units = {u for d in kept for u, _ in d.units}
    return replace(ds, docs=kept, queries=[q for q in ds.queries if q.relevant <= units])


async def run(
    settings: Settings,
    dataset: str,
    data: Path,
    mode: Mode,
    progress: Progress,
    *,
    top_k: int | None = None,
    pool: int | None = None,
    keep: bool = False,
    embed_cache: Path | None = None,
    limit: int | None = None,
    ablation: bool = False,
    docs: int | None = None,
    via: str = "import",
    folds: bool = False,
    cv: bool = False,
) -> dict[str, Any]:
    """``cv`` (LoCoMo only): fusion per kind of question chosen by leave-one-conversation-out
    (``recall_cv``). ``via``: ``import`` (documents through ``importDocument``) or, for LoCoMo only,
    ``harvest`` (turns through ``harvest`` and the consolidator; see ``harvest_ingest``).
    ``folds`` (LoCoMo only): per-conversation figures with and without each lever."""
    if (folds or cv) and dataset != "locomo":
        raise InvalidArgument(f"--folds and --cv are not available for {dataset} (locomo only)")
    if via not in VIAS or (via == "harvest" and dataset != "locomo"):
        raise InvalidArgument(
            f"--via {via} is not available for {dataset} (import; harvest: locomo)"
        )
    started = time.perf_counter()
    table: dict[str, dict[str, float]] = {}
    cv_result: dict[str, Any] | None = None
    fold_rows: list[dict[str, Any]] = []
    ds = LOADERS[dataset](data)
    full_documents = len(ds.docs)
    if docs is not None:
        ds = subsample(ds, docs)
    if limit is not None:
        from palimpsest_bench.subset import limit_dataset

        ds = limit_dataset(ds, limit)
    k = top_k or DEFAULT_TOP_K[dataset]
    tenant = f"eval-{dataset}-{uuid.uuid4().hex[:12]}"
    progress(
        f"{dataset}: {len(ds.docs)} documents, {sum(len(d.units) for d in ds.docs)} units, "
        f"{len(ds.queries)} queries; mode {mode.value}, topK {k}; tenant {tenant}"
    )
    async with services(settings) as base:
        cache = CachedEmbedder(base.embedder, embed_cache) if embed_cache else None
        svc = replace(base, embedder=cache) if cache else base
        loaded = Loaded()
        harvested: harvest_ingest.Harvested | None = None
        try:
            ingest_started = time.perf_counter()
            if via == "harvest":
                harvested = await harvest_ingest.ingest(svc, settings, tenant, ds, progress)
                loaded.unit_of_chunk = harvested.unit_of_chunk
                loaded.chunks = len(harvested.unit_of_chunk)
            else:
                loaded = await ingest(svc, tenant, ds, progress)
            ingest_seconds = time.perf_counter() - ingest_started

            query_started = time.perf_counter()
            rankings = await answer_all(svc, tenant, ds, loaded, mode, k, pool)
            query_seconds = time.perf_counter() - query_started
            if ablation or folds:
                variants = await ablation_rankings(svc, tenant, ds, loaded, mode, k, pool, progress)
                table = {"all levers": headline(ds, rankings)}
                table |= {name: headline(ds, r) for name, r in variants.items()}
                if folds:
                    from palimpsest_bench.recall_folds import ALL, fold_table

                    fold_rows = fold_table(ds, {ALL: rankings, **variants})
            if cv:
                from palimpsest_bench.recall_cv import run_cv

                progress("  cross-validating fusion per kind of question")
                cv_result = await run_cv(svc, tenant, ds, loaded.unit_of_chunk, rankings)
        finally:
            if not keep:
                progress(f"  deleting {len(loaded.documents)} documents")
                await erase(svc, tenant, loaded)
                if via == "harvest":
                    users = sorted({d.owner for d in ds.docs})
                    await harvest_ingest.erase(svc, tenant, users)
            if cache is not None:
                cache.close()
    per_query = [
        (q, score(dataset, ranked, q.relevant))
        for q, ranked in zip(ds.queries, rankings, strict=True)
    ]
    metrics, by_category = summarise(ds, per_query)
    progress(f"{dataset} {mode.value}: {metrics}")
    result: dict[str, Any] = {
        "dataset": dataset,
        "via": via,
        "mode": mode.value,
        "n": sum(
            1 for q, _ in per_query if ds.name != "locomo" or q.category in HEADLINE_CATEGORIES
        ),
        "metrics": metrics,
        "malformed": _malformed(ds, loaded),
    }
    if by_category is not None:
        result["by_category"] = by_category
    if cv_result is not None:
        result["cv"] = cv_result
    if ablation or folds:
        result["ablation"] = table
    if folds:
        from palimpsest_bench.recall_folds import holds

        result["folds"] = fold_rows
        result["holds"] = holds(fold_rows)
    result.update(
        {
            "seconds": round(time.perf_counter() - started, 2),
            "top_k": k,
            "model": settings.embedding.model,
            "documents": len(ds.docs),
            "chunks": loaded.chunks,
            "ingest_seconds": round(ingest_seconds, 2),
            "ingest_chunks_per_s": round(loaded.chunks / max(ingest_seconds, 1e-9), 1),
            "query_seconds": round(query_seconds, 2),
            "queries_per_s": round(len(ds.queries) / max(query_seconds, 1e-9), 1),
        }
    )
    if harvested is not None:
        result["spans"] = harvested.spans
        result["harvest_seconds"] = round(harvested.harvest_seconds, 2)
        result["consolidate_seconds"] = round(harvested.consolidate_seconds, 2)
    if limit is not None:
        result["limited"] = {"queries": limit, "documents_of": full_documents}
    if keep:
        result["tenant"] = tenant
    return result
