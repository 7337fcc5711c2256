"""A bench-side prototype of the document title in a chunk's embedded text (issue 28, title
context part 2), to measure it before building it into the product.

The dataset is loaded twice through the product's import: once as the product embeds chunks
(their own text), once with every chunk of a document embedded as ``"Title: <title>\\n\\n"``
plus its text (the contextual chunk header of the literature; the full-text representation is
the product's in both, so only the vector leg differs). Every question is asked of both in
hybrid and vector mode; for LoCoMo the per-conversation rows come out as ``fold_table`` makes
them, the variant in the place of a lever removed (so ``holds`` counts, per metric, the
conversations where the variant is *worse*, then better).

Run: ``palimpsest eval title-embed locomo --data ../shared/eval/dev/locomo`` (``timeqa`` and
``scifact`` too; ``--docs N`` for the first N documents). Prints JSON.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.embedding import Embedder, Vector
from palimpsest.resolvers.recall.planner import Mode
from palimpsest.runtime import open_services
from palimpsest_bench.embed_cache import CachedEmbedder
from palimpsest_bench.recall_data import LOADERS, Doc
from palimpsest_bench.recall_eval import (
    DEFAULT_TOP_K,
    answer_all,
    subsample,
)
from palimpsest_bench.recall_folds import ALL, fold_table, holds
from palimpsest_bench.recall_ingest import Loaded, Progress, erase, ingest
from palimpsest_bench.recall_metrics import score
from palimpsest_bench.recall_summary import summarise

VARIANT = "title embedded"


def header(title: str) -> str:
    """The text put before every chunk of a document titled ``title``."""
    return f"Title: {title}\n\n"


class Prefixed:
    """An embedder that embeds every text after ``prefix`` (one document's chunks)."""

    def __init__(self, inner: Embedder, prefix: str) -> None:
        self.inner = inner
        self.prefix = prefix

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return self.inner.embed([self.prefix + t for t in texts])


async def run(
    dataset: str, data: Path, embed_cache: Path | None, docs: int | None, progress: Progress
) -> dict[str, Any]:
    ds = LOADERS[dataset](data)
    if docs is not None:
        ds = subsample(ds, docs)
    k = DEFAULT_TOP_K[dataset]
    plain_tenant = f"eval-titleemb-{uuid.uuid4().hex[:12]}"
    title_tenant = f"{plain_tenant}-title"
    rankings: dict[str, dict[str, list[list[str]]]] = {}
    async with open_services(Settings()) as base:
        cache = CachedEmbedder(base.embedder, embed_cache) if embed_cache else None
        svc = replace(base, embedder=cache) if cache else base
        inner = svc.embedder

        def titled(doc: Doc) -> Embedder:
            return Prefixed(inner, header(doc.title))

        plain, title = Loaded(), Loaded()
        try:
            progress(f"{dataset}: {len(ds.docs)} documents, {len(ds.queries)} queries")
            plain = await ingest(svc, plain_tenant, ds, progress)
            title = await ingest(svc, title_tenant, ds, progress, titled)
            for mode in (Mode.HYBRID, Mode.VECTOR):
                rankings[mode.value] = {
                    ALL: await answer_all(svc, plain_tenant, ds, plain, mode, k, None),
                    VARIANT: await answer_all(svc, title_tenant, ds, title, mode, k, None),
                }
                progress(f"  {mode.value} done")
        finally:
            await erase(svc, plain_tenant, plain)
            await erase(svc, title_tenant, title)
            if cache is not None:
                cache.close()
    out: dict[str, Any] = {"dataset": ds.name, "documents": len(ds.docs), "modes": {}}
    for mode_name, variants in rankings.items():
        overall = {}
        for name, ranked in variants.items():
            per_query = [
                (q, score(ds.name, r, q.relevant)) for q, r in zip(ds.queries, ranked, strict=True)
            ]
            metrics, by_category = summarise(ds, per_query)
            overall[name] = {"metrics": metrics, "by_category": by_category}
        entry: dict[str, Any] = {"overall": overall}
        if ds.name == "locomo":
            folds = fold_table(ds, {ALL: variants[ALL], f"-{VARIANT}": variants[VARIANT]})
            entry |= {"folds": folds, "holds_baseline_vs_variant": holds(folds)}
        out["modes"][mode_name] = entry
    return out
