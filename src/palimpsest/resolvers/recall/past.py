"""Recall over notes as they were known at ``when.knownAt`` (docs/decisions/0007-note-versions.md).

Past versions are in no index, so a recall with a ``knownAt`` before now reads the scope's
notes as known then (current nodes written by then, and past versions current then) and ranks
them exactly: cosine over their stored vectors, BM25 over their stored terms with the scope's
present statistics (the past has none of its own). Fusion, boosts and the time window are
the present's; only the notes' legs and their load differ. Facts read ``knownAt`` in their
own legs; chunks keep no past yet.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.cypher import note_versions as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.domain.ranking.fusion import Source
from palimpsest.resolvers.recall.legs import Cues, Ranked


def reads_past(known_at: datetime | None, now: datetime) -> bool:
    """True when notes must be read as known at ``known_at`` (a future one reads now)."""
    return known_at is not None and known_at < now


async def vector_leg(tx: ScopedTx, vector: list[float], pool: int, base: dict[str, Any]) -> Ranked:
    rows = _columns(await tx.run(q.PAST_VECTOR_MEMORY, {**base, "vector": vector, "k": pool * 4}))
    live = [r for r in rows if r["live"]][:pool]
    return Ranked(
        [r["id"] for r in live],
        {r["id"]: 2.0 * float(r["score"]) - 1.0 for r in live},
        {r["id"] for r in rows if not r["live"] and r["untimely"]},
        {r["id"]: Cues.of(r["cues"]) for r in live},
    )


async def fulltext_leg(
    tx: ScopedTx,
    terms: Sequence[str],
    stats: KindStats,
    pool: int,
    base: dict[str, Any],
    k1: float,
    b: float,
) -> Ranked:
    scorer = fulltext.Scorer.of(terms, stats, k1, b)
    rows = _columns(await tx.run(q.PAST_TERMS_MEMORY, {**base, "terms": list(terms), "space": " "}))
    scores = {r["id"]: scorer.score(r["ft"], r["tf"], int(r["len"])) for r in rows}
    live = heapq.nsmallest(
        pool, (r["id"] for r in rows if r["live"]), key=lambda i: (-scores[i], i)
    )
    return Ranked(
        live,
        {i: scores[i] for i in live},
        {r["id"] for r in rows if not r["live"] and r["untimely"]},
        {r["id"]: Cues.of(r["cues"]) for r in rows if r["id"] in set(live)},
    )


async def load_notes(tx: ScopedTx, keys: Sequence[str], base: dict[str, Any]) -> list[Row]:
    [row] = await tx.run(q.PAST_LOAD_NOTES, {**base, "notes": list(keys)})
    notes: list[Row] = row["notes"]
    return notes


def _columns(rows: list[Row]) -> list[Row]:
    if not rows:
        return []
    [record] = rows
    names = {"ids": "id", "scores": "score", "lens": "len"}
    cols = [names.get(n, n) for n in record]
    return [dict(zip(cols, vals, strict=True)) for vals in zip(*record.values(), strict=True)]


@dataclass(frozen=True, slots=True)
class KindFilter:
    """The temporal filters a recall applied to one kind of row: ``window`` (from/to on
    observedAt), ``as_of`` (validity, now by default), ``known_at`` (transaction time)."""

    kind: Source
    filters: tuple[str, ...]


def applied_filters(
    sources: Sequence[Source], window: bool, known_at: datetime | None
) -> list[KindFilter]:
    out = []
    for source in sources:
        filters = ["window"] if window else []
        if source in _VALID_TIME:
            filters.append("as_of")
        if known_at is not None:
            filters.append("known_at")  # every kind keeps its past (chunks: revisions)
        out.append(KindFilter(source, tuple(filters)))
    return out


# Kinds whose rows have a validity (world time); chunks have a transaction time only.
_VALID_TIME = frozenset({Source.NOTES, Source.FACTS})
