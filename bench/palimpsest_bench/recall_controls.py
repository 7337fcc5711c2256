"""``bench recall-controls``: what recall's per-call controls cost and change
(docs/notes/recall-controls.md).

One fresh USER scope of ``documents`` documents of ``paragraphs`` paragraphs each (observedAt
spread over two years; hashed vectors, ``HashEmbedder``, so the load runs at database speed
and the query is embedded the same way), then ``queries`` searches (topK 10, every kind),
each run once per variant, the variants interleaved: no control, each control alone, and all
of them. Per variant: p50/p95 latency of the resolver (``recall_asks.search``), the mean
number of hits, the mean largest number of hits of one document, and the share of queries
whose top 10 differs from the answer with no control. The scope is erased at the end.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.principal import console_operator
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.documents.importing import DocumentDraft
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.recall import asks
from palimpsest.runtime import open_services
from palimpsest_bench.common import HashEmbedder, principal
from palimpsest_bench.versions import WORDS, _pcts

VARIANTS: dict[str, asks.Controls] = {
    "none": asks.Controls(),
    "min_score": asks.Controls(min_score=0.6),
    "recency_half_life": asks.Controls(recency_half_life="30d"),
    "weights": asks.Controls(weights=asks.LegWeights(vector=2.0, fulltext=0.5)),
    "max_per_document": asks.Controls(max_per_document=2),
    "all": asks.Controls(0.6, "30d", asks.LegWeights(2.0, 0.5), 2),
}
START = datetime(2024, 1, 1, tzinfo=UTC)


def run(
    settings: Settings,
    documents: int = 60,
    paragraphs: int = 10,
    queries: int = 100,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    return asyncio.run(_run(settings, documents, paragraphs, queries, say or (lambda _: None)))


def _paragraph(rng: random.Random, doc: int, i: int) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(6))
    return f"Note {doc}.{i} about the {words}, kept for the controls benchmark."


async def _run(
    settings: Settings, documents: int, paragraphs: int, queries: int, say: Callable[[str], None]
) -> dict[str, Any]:
    tenant = f"bench-controls-{uuid.uuid4().hex[:8]}"
    who = principal(tenant, "reader")
    rng = random.Random(11)
    async with open_services(settings) as opened:
        svc = replace(
            opened,
            embedder=HashEmbedder(opened.embedder.model_name, opened.embedder.dimensions),
        )
        try:
            say(f"importing {documents} documents of {paragraphs} paragraphs")
            drafts = [
                DocumentDraft(
                    f"# Document {d}\n\n"
                    + "\n\n".join(_paragraph(rng, d, i) for i in range(paragraphs))
                    + "\n",
                    path=f"/bench/controls/{d}.md",
                    observed_at=START + timedelta(days=rng.randrange(730)),
                )
                for d in range(documents)
            ]
            for at in range(0, len(drafts), 50):
                await document_import.import_documents(svc, who, Scope.USER, drafts[at : at + 50])
            asked = [" ".join(rng.sample(WORDS, 3)) for _ in range(queries)]
            say(f"{queries} queries x {len(VARIANTS)} variants")
            took: dict[str, list[float]] = {v: [] for v in VARIANTS}
            sizes: dict[str, list[int]] = {v: [] for v in VARIANTS}
            per_doc: dict[str, list[int]] = {v: [] for v in VARIANTS}
            changed: Counter[str] = Counter()
            for query in asked:
                base: list[str] = []
                for name, controls in VARIANTS.items():
                    ask = asks.Ask(query, top_k=10, controls=controls)
                    started = time.perf_counter()
                    result = await asks.search(svc, who, ask)
                    took[name].append(time.perf_counter() - started)
                    ids = [h.id for h in result.hits]
                    if name == "none":
                        base = ids
                    changed[name] += ids != base
                    sizes[name].append(len(ids))
                    docs = Counter(h.document_id for h in result.hits if h.document_id)
                    per_doc[name].append(max(docs.values(), default=0))
            return {
                "recall_controls": {
                    "rows": documents * paragraphs,
                    "queries": queries,
                    "variants": {
                        name: {
                            **_pcts(took[name]),
                            "mean_hits": round(sum(sizes[name]) / queries, 2),
                            "mean_most_per_document": round(sum(per_doc[name]) / queries, 2),
                            "changed_share": round(changed[name] / queries, 3),
                        }
                        for name in VARIANTS
                    },
                }
            }
        finally:
            assert who.user_id is not None
            await erasure.erase_user(svc, console_operator(tenant), who.user_id)
