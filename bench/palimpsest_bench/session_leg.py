"""A bench-side prototype of the session-level leg (issue 28, item 2b), to measure the lever
before building it into the product.

A conversation's session (a LoCoMo Document) gets two representations, computed here from
the loaded scope's own chunks (read back from Neo4j, scope by scope):

- a vector: the normalised mean of its chunks' stored embeddings;
- a full-text representation: the bag of its chunks' own terms (``fulltext.bag``), scored by
  BM25 with the statistics of the scope's own sessions (rows = its sessions), exactly as the
  chunk full-text leg scores chunks.

For a question, each representation ranks the scope's sessions (a session leg); a chunk
candidate of the product's recall gains ``weight / (k + rank of its session)`` per session
leg, the RRF term a leg's list adds, then the candidates are sorted again and the top ten
scored. Only the scope's own rows reach a rank. The candidates are those of the product's
recall at its default pool (``pool`` 20 for top 10; asked for up to 40 hits so that the whole
candidate list is reordered, as the session prior does), so the lever reorders, never adds.

Run: ``palimpsest eval session-leg locomo --data ../shared/eval/dev/locomo`` (or
``python -m palimpsest_bench.session_leg``)
(``timeqa``/``scifact`` too, ``--docs N`` for the first N documents) (prints
JSON: overall, per-category and per-conversation figures per variant, and how many
conversations each variant helps or harms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Statement
from palimpsest.domain.ranking import cues, fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.domain.ranking.fusion import Levers
from palimpsest.identity import resolve_scope
from palimpsest.resolvers.recall.planner import MAX_POOL, Hit, Mode, recall
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest_bench.common import principal
from palimpsest_bench.embed_cache import CachedEmbedder
from palimpsest_bench.recall_data import LOADERS, Dataset, Query
from palimpsest_bench.recall_eval import (
    DATASETS,
    DEFAULT_TOP_K,
    request,
    subsample,
)
from palimpsest_bench.recall_folds import ALL, fold_table, holds
from palimpsest_bench.recall_ingest import SCOPE, Loaded, erase, ingest
from palimpsest_bench.recall_metrics import dedupe, score
from palimpsest_bench.recall_summary import summarise

SCOPE_CHUNKS = Statement(
    "BENCH_SESSION_LEG_CHUNKS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.embedding IS NOT NULL
RETURN c.id AS id, c.document_id AS document, c.embedding AS embedding, c.text AS text
ORDER BY c.document_id, c.id
""",
)


@dataclass(frozen=True, slots=True)
class Sessions:
    """One scope's sessions: ids in a fixed order, unit vectors, stored term bags, stats."""

    ids: tuple[str, ...]
    vectors: tuple[tuple[float, ...], ...]
    bags: tuple[fulltext.Stored, ...]
    stats: KindStats
    speakers: frozenset[str]


def sessions_of(rows: Sequence[Mapping[str, Any]]) -> Sessions:
    """The sessions of one scope from its chunks (id, document, embedding, text)."""
    sums: dict[str, list[float]] = {}
    bags: dict[str, Counter[str]] = {}
    speakers: set[str] = set()
    for r in rows:
        doc = str(r["document"])
        vec = [float(x) for x in r["embedding"]]
        acc = sums.setdefault(doc, [0.0] * len(vec))
        sums[doc] = [a + x for a, x in zip(acc, vec, strict=True)]
        bags.setdefault(doc, Counter()).update(fulltext.bag(str(r["text"])))
        head, sep, _ = str(r["text"]).partition(":")
        if sep and 0 < len(head) <= 40:
            speakers.add(head.strip().lower())
    ids = tuple(sorted(sums))
    stored = tuple(fulltext.Stored.of(bags[d]) for d in ids)
    df: Counter[str] = Counter()
    for d in ids:
        df.update(set(bags[d]))
    stats = KindStats(len(ids), sum(s.length for s in stored), dict(df))
    return Sessions(ids, tuple(_unit(sums[d]) for d in ids), stored, stats, frozenset(speakers))


def _unit(v: Sequence[float]) -> tuple[float, ...]:
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return tuple(x / norm for x in v)


def session_ranks(
    s: Sessions, vector: Sequence[float], terms: Sequence[str], k1: float, b: float
) -> dict[str, dict[str, int]]:
    """Per session leg (``vector``, ``fulltext``), session id -> rank (1 = best; ties by id);
    the full-text leg ranks only sessions holding a query term."""
    q = _unit(vector)
    cosine = {
        d: sum(a * x for a, x in zip(q, v, strict=True))
        for d, v in zip(s.ids, s.vectors, strict=True)
    }
    scorer = fulltext.Scorer.of(terms, s.stats, k1, b)
    bm25 = {d: scorer.score(st.ft, st.tf, st.length) for d, st in zip(s.ids, s.bags, strict=True)}
    out: dict[str, dict[str, int]] = {}
    for leg, scores in (("vector", cosine), ("fulltext", bm25)):
        order = sorted(
            (d for d in s.ids if leg == "vector" or scores[d] > 0), key=lambda d: (-scores[d], d)
        )
        out[leg] = {d: i + 1 for i, d in enumerate(order)}
    # One session rank from both: the two session lists fused by RRF (ties by id).
    fused = {d: sum(1.0 / (60 + r[d]) for r in out.values() if d in r) for d in s.ids}
    order = sorted(s.ids, key=lambda d: (-fused[d], d))
    out["fused"] = {d: i + 1 for i, d in enumerate(order)}
    return out


def rerank(
    hits: Sequence[Hit],
    ranks: Mapping[str, Mapping[str, int]],
    legs: Sequence[str],
    weight: float,
    k: int,
    depth: int | None = None,
) -> list[Hit]:
    """Each hit gains ``weight / (k + rank)`` per session leg in ``legs`` (nothing from a
    session ranked past ``depth``); best first again, stable on ties. Copies, never mutates."""
    scored: list[tuple[float, int, Hit]] = []
    for i, h in enumerate(hits):
        gain = 0.0
        for leg in legs:
            rank = ranks.get(leg, {}).get(h.document_id or "")
            if rank is not None and (depth is None or rank <= depth):
                gain += weight / (k + rank)
        scored.append((h.score + gain, i, h))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [h for _, _, h in scored]


VARIANTS: dict[str, tuple[tuple[str, ...], float, int | None]] = {
    "both, 1": (("vector", "fulltext"), 1.0, None),
    "both, 0.5": (("vector", "fulltext"), 0.5, None),
    "both, 2": (("vector", "fulltext"), 2.0, None),
    "vector, 1": (("vector",), 1.0, None),
    "fulltext, 1": (("fulltext",), 1.0, None),
    "both, 0.25": (("vector", "fulltext"), 0.25, None),
    "fulltext, 0.5": (("fulltext",), 0.5, None),
    "fulltext, 0.25": (("fulltext",), 0.25, None),
    "vector, 0.5": (("vector",), 0.5, None),
    "fused rank, 1": (("fused",), 1.0, None),
    "fused rank, 0.5": (("fused",), 0.5, None),
    "both, 1, top 3": (("vector", "fulltext"), 1.0, 3),
    "both, 1, top 5": (("vector", "fulltext"), 1.0, 5),
}


def sizes(dataset: str, pool_factor: int = 2) -> tuple[int, int, int]:
    """(top k scored, the product's pool per leg for it, candidates asked for): every
    candidate of one scope's two chunk legs, as many as the resolver serves."""
    top = DEFAULT_TOP_K[dataset]
    pool = min(pool_factor * top, MAX_POOL)
    return top, pool, min(2 * pool, MAX_POOL)


async def _candidates(
    svc: Services, tenant: str, ds: Dataset, q: Query, levers: Levers
) -> list[Hit]:
    _, pool, candidates = sizes(ds.name, svc.settings.recall.pool_factor)
    req = request(svc, q, Mode.HYBRID, candidates, pool, levers)
    result = await recall(svc, principal(tenant, q.owner), [SCOPE], req)
    return result.hits


async def evaluate(
    svc: Services, tenant: str, ds: Dataset, loaded: Loaded, progress: Any
) -> dict[str, list[list[str]]]:
    """One ranking per query and variant (``all`` = the product's recall as it is)."""
    levers = Levers.of(svc.settings)
    sessions: dict[str, Sessions] = {}
    for owner in sorted({q.owner for q in ds.queries}):
        ref = resolve_scope(principal(tenant, owner), SCOPE)
        sessions[owner] = sessions_of(await svc.db.scoped(ref).read(SCOPE_CHUNKS))
    rankings: dict[str, list[list[str]]] = {ALL: [], **{v: [] for v in VARIANTS}}
    rankings["session prior, 1"] = []
    gate = asyncio.Semaphore(8)

    async def one(q: Query) -> dict[str, list[str]]:
        async with gate:
            s = sessions[q.owner]
            who = principal(tenant, q.owner)
            hits = await _candidates(svc, tenant, ds, q, levers)
            prior = await _candidates(svc, tenant, ds, q, replace(levers, session_prior=1.0))
            named = cues.named_speakers(q.text, s.speakers) if levers.speaker_strip else ()
            text = cues.without_speakers(q.text, named) if named else q.text
            vector = list(await svc.embed_question(who, text))
            terms = fulltext.query_terms(q.text, levers.question_words)
            ranks = session_ranks(s, vector, terms, levers.k1, levers.b)
            out = {ALL: _units(ds, loaded, hits), "session prior, 1": _units(ds, loaded, prior)}
            for name, (legs, weight, depth) in VARIANTS.items():
                again = rerank(hits, ranks, legs, weight, svc.settings.recall.rrf_k, depth)
                out[name] = _units(ds, loaded, again)
            return out

    done = await asyncio.gather(*(one(q) for q in ds.queries))
    for per in done:
        for name, ranked in per.items():
            rankings[name].append(ranked)
    progress(f"  ranked {len(done)} questions")
    return rankings


def _units(ds: Dataset, loaded: Loaded, hits: Sequence[Hit]) -> list[str]:
    """The scored units of the top k hits (documents, first occurrence, when they count)."""
    top = sizes(ds.name)[0]
    if ds.by_document:
        return dedupe(loaded.unit_of_document[h.document_id or ""] for h in hits)[:top]
    return [loaded.unit_of_chunk[h.id] for h in hits[:top]]


async def run(
    dataset: str, data: Path, embed_cache: Path | None, docs: int | None, progress: Any
) -> dict[str, Any]:
    ds = LOADERS[dataset](data)
    if docs is not None:
        ds = subsample(ds, docs)
    tenant = f"eval-sessleg-{uuid.uuid4().hex[:12]}"
    settings = Settings()
    async with open_services(settings) as base:
        cache = CachedEmbedder(base.embedder, embed_cache) if embed_cache else None
        svc = replace(base, embedder=cache) if cache else base
        loaded = Loaded()
        try:
            loaded = await ingest(svc, tenant, ds, progress)
            rankings = await evaluate(svc, tenant, ds, loaded, progress)
        finally:
            await erase(svc, tenant, loaded)
            if cache is not None:
                cache.close()
    overall: dict[str, Any] = {}
    for name, ranked in rankings.items():
        per_query = [
            (q, score(ds.name, r, q.relevant)) for q, r in zip(ds.queries, ranked, strict=True)
        ]
        metrics, by_category = summarise(ds, per_query)
        overall[name] = {"metrics": metrics, "by_category": by_category}
    if ds.name != "locomo":
        return {"dataset": ds.name, "documents": len(ds.docs), "overall": overall}
    # ``fold_table`` compares ``all`` with ``-<name>``: the variants go in as "without" rows.
    folds = fold_table(
        ds, {ALL: rankings[ALL], **{f"-{n}": r for n, r in rankings.items() if n != ALL}}
    )
    return {
        "dataset": ds.name,
        "overall": overall,
        "folds": folds,
        "holds_baseline_vs_variant": holds(folds),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", choices=DATASETS)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--docs", type=int, default=None)
    parser.add_argument("--embed-cache", type=Path, default=None)
    args = parser.parse_args()
    result = asyncio.run(
        run(
            args.dataset,
            args.data,
            args.embed_cache,
            args.docs,
            lambda m: print(m, file=sys.stderr),
        )
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
