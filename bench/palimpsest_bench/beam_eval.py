"""``palimpsest eval beam``: BEAM's questions through the real ingest and recall paths.

The LoCoMo machinery (``recall_eval``) with BEAM's mapping (``beam_data``) and figures
(``beam_metrics``): the conversations go into a fresh tenant, one user each, through
``importDocument`` (a document per batch) or ``harvest`` and the consolidator (a run per
batch, a span per message); each question with evidence is one ``search`` of its user's scope
(``topK`` 10, documents only, the settings' fusion); the tenant is erased afterwards unless
``keep``. ``--mode bm25`` ranks with the plain BM25 baseline instead (``beam_bm25``: no
database, no model). ``--ablate`` and ``--folds`` remove each query-time lever in turn (the
ingest-time levers would load the 10,080 long messages again for each: left out).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument
from palimpsest.resolvers.recall.request import Mode
from palimpsest.runtime import open_services as services
from palimpsest_bench import beam_bm25, harvest_ingest
from palimpsest_bench.beam_data import Beam, first_conversations, load_beam
from palimpsest_bench.beam_metrics import ALL, FOLD_METRICS, figures, fold_table
from palimpsest_bench.beam_metrics import details as evidence_ranks
from palimpsest_bench.embed_cache import CachedEmbedder
from palimpsest_bench.recall_eval import VIAS, ablation_rankings, answer_all, headline
from palimpsest_bench.recall_folds import holds
from palimpsest_bench.recall_ingest import Loaded, Progress, erase, ingest

BM25 = "bm25"
MODES = (*(m.value for m in Mode), BM25)
TOP_K = 10


def _questions(beam: Beam) -> dict[str, Any]:
    unscored: dict[str, int] = {}
    for _, kind in beam.unscored:
        unscored[kind] = unscored.get(kind, 0) + 1
    scored = len(beam.dataset.queries)
    return {
        "total": scored + len(beam.unscored),
        "scored": scored,
        "unscored": len(beam.unscored),
        "unscored_by_type": dict(sorted(unscored.items())),
    }


async def run(
    settings: Settings,
    data: Path,
    mode: str,
    progress: Progress,
    *,
    via: str = "import",
    pool: int | None = None,
    keep: bool = False,
    embed_cache: Path | None = None,
    limit: int | None = None,
    ablation: bool = False,
    folds: bool = False,
    details: bool = False,
) -> dict[str, Any]:
    """``limit``: only the first N conversations (an indicative run). ``details``: each
    question's evidence ranks in the JSON too."""
    if mode not in MODES:
        raise InvalidArgument(f"--mode {mode}: one of {', '.join(MODES)}")
    if via not in VIAS:
        raise InvalidArgument(f"--via {via}: one of {', '.join(VIAS)}")
    if mode == BM25 and (ablation or folds):
        raise InvalidArgument("--ablate and --folds need a recall mode, not bm25")
    started = time.perf_counter()
    beam = load_beam(data)
    conversations = len({d.owner for d in beam.dataset.docs})
    if limit is not None:
        beam = first_conversations(beam, limit)
    ds = beam.dataset
    units = sum(len(d.units) for d in ds.docs)
    result: dict[str, Any] = {"dataset": "beam", "mode": mode}
    progress(
        f"beam: {len({d.owner for d in ds.docs})} conversations, {len(ds.docs)} batches, "
        f"{units} messages, {len(ds.queries)} questions with evidence; mode {mode}"
    )
    variants: dict[str, list[list[str]]] = {}
    timing: dict[str, Any] = {}
    if mode == BM25:
        rankings = beam_bm25.rank_all(ds, TOP_K)
    else:
        result["via"] = via
        rankings, variants, timing = await _recall(
            settings, beam, Mode(mode), via, pool, keep, embed_cache, ablation or folds, progress
        )
    scored = figures(beam, ds.queries, rankings)
    progress(
        f"beam {mode}: {scored['metrics']}; newer first {scored['knowledge_update_newer_first']}"
    )
    result.update(scored)
    result["questions"] = _questions(beam)
    result["skipped"] = beam.skipped
    if details:
        result["details"] = evidence_ranks(beam, ds.queries, rankings)
    if variants:
        table = {"all levers": headline(ds, rankings)}
        table |= {name: headline(ds, r) for name, r in variants.items()}
        result["ablation"] = table
    if folds:
        rows = fold_table(beam, {ALL: rankings, **variants})
        result["folds"] = rows
        result["holds"] = holds(rows, FOLD_METRICS)
    result.update(
        {
            "seconds": round(time.perf_counter() - started, 2),
            "top_k": TOP_K,
            "messages": units,
            "documents": len(ds.docs),
            **timing,
        }
    )
    if mode != BM25:
        result["model"] = settings.embedding.model
    if limit is not None:
        result["limited"] = {"conversations": limit, "of": conversations}
    return result


async def _recall(
    settings: Settings,
    beam: Beam,
    mode: Mode,
    via: str,
    pool: int | None,
    keep: bool,
    embed_cache: Path | None,
    ablate: bool,
    progress: Progress,
) -> tuple[list[list[str]], dict[str, list[list[str]]], dict[str, Any]]:
    ds = beam.dataset
    tenant = f"eval-beam-{uuid.uuid4().hex[:12]}"
    progress(f"  tenant {tenant}, via {via}")
    timing: dict[str, Any] = {}
    variants: dict[str, list[list[str]]] = {}
    async with services(settings) as base:
        cache = CachedEmbedder(base.embedder, embed_cache) if embed_cache else None
        svc = replace(base, embedder=cache) if cache else base
        loaded = Loaded()
        try:
            t0 = time.perf_counter()
            if via == "harvest":
                harvested = await harvest_ingest.ingest(svc, settings, tenant, ds, progress)
                loaded.unit_of_chunk = harvested.unit_of_chunk
                loaded.chunks = len(harvested.unit_of_chunk)
                timing["harvest_seconds"] = round(harvested.harvest_seconds, 2)
                timing["consolidate_seconds"] = round(harvested.consolidate_seconds, 2)
            else:
                loaded = await ingest(svc, tenant, ds, progress)
                if loaded.refused:
                    ds.malformed["documents: refused by importDocument"] = loaded.refused
            t1 = time.perf_counter()
            rankings = await answer_all(svc, tenant, ds, loaded, mode, TOP_K, pool)
            t2 = time.perf_counter()
            if ablate:
                variants = await ablation_rankings(
                    svc, tenant, ds, loaded, mode, TOP_K, pool, progress, reload=False
                )
            timing.update(
                {
                    "chunks": loaded.chunks,
                    "ingest_seconds": round(t1 - t0, 2),
                    "ingest_chunks_per_s": round(loaded.chunks / max(t1 - t0, 1e-9), 1),
                    "query_seconds": round(t2 - t1, 2),
                    "queries_per_s": round(len(ds.queries) / max(t2 - t1, 1e-9), 1),
                }
            )
        finally:
            if keep:
                timing["tenant"] = tenant
            else:
                progress("  erasing the tenant's memory")
                await erase(svc, tenant, loaded)
                if via == "harvest":
                    await harvest_ingest.erase(svc, tenant, sorted({d.owner for d in ds.docs}))
            if cache is not None:
                cache.close()
    return rankings, variants, timing
