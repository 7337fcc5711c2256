"""Recall's per-call controls (docs/reference/recall.md, Per-call controls): checked here, in the
core, and applied by the planner; the doors only carry them.

- ``minScore``: a floor on the cosine. A hit with a cosine is kept iff the cosine is at or
  above the floor. A hit with no cosine (the vector leg did not return it) stands on its
  full-text leg alone: kept iff that leg ranked it within ``topK``, otherwise dropped.
- ``recencyHalfLife``: the fused score times ``2^(-age / halfLife)``, the age of
  ``observedAt`` at the reference (``when.to``, else the query time; a row observed after it
  has age 0). Undated rows are not weighted. Never a filter.
- ``weights``: the weights of the fusion legs (the server's settings where not given).
- ``maxPerDocument``: at most N hits per document, best first; rows of no document are not
  limited.

Each control shows in the hit's ``explain``: the floor's verdict, the ``recency`` factor among
the boosts, each leg's weight, and the hit's place among its document's hits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from palimpsest.cypher import recall_controls as q
from palimpsest.cypher.driver.executor import Tx
from palimpsest.domain.ranking import fusion as pure
from palimpsest.errors import InvalidArgument
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.recall.hits import BoostPart, Hit

MAX_WEIGHT = 100.0
MAX_PER_DOCUMENT = 50
MAX_HALF_LIFE = timedelta(days=36500)
_HALF_LIFE = re.compile(r"^(\d{1,9})\s*([smhdw])$", re.ASCII)
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
RECENCY = "recency"  # the lever name of the recency factor in ``explain.boosts``


@dataclass(frozen=True, slots=True)
class LegWeights:
    """The weights a caller gives the fusion legs; None keeps the server's setting."""

    vector: float | None = None
    fulltext: float | None = None


class GivenWeights(Protocol):
    """A door's weights argument (a GraphQL input, an MCP model): read, never kept."""

    @property
    def vector(self) -> float | None: ...
    @property
    def fulltext(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Controls:
    """The controls as the caller states them (wire-level values)."""

    min_score: float | None = None
    recency_half_life: str | None = None
    weights: LegWeights | None = None
    max_per_document: int | None = None
    # The full-text rank within which a hit with no cosine passes ``min_score`` (None: topK).
    # No door takes it: ``context`` asks for many hits to fill its budget and counts a rank
    # within recall's default topK as word evidence, not one within its own topK.
    fulltext_within: int | None = None

    @classmethod
    def of(
        cls,
        min_score: float | None,
        recency_half_life: str | None,
        weights: GivenWeights | None,
        max_per_document: int | None,
    ) -> Controls:
        """The controls from a door's arguments, as they came (checked by ``check``)."""
        legs = None if weights is None else LegWeights(weights.vector, weights.fulltext)
        return cls(min_score, recency_half_life, legs, max_per_document)


@dataclass(frozen=True, slots=True)
class Applied:
    """The controls checked: what the planner applies (all None: nothing changes)."""

    min_score: float | None = None
    half_life: timedelta | None = None
    reference: datetime | None = None  # the recency reference; None: the query time
    max_per_document: int | None = None
    fulltext_within: int | None = None  # see ``Controls``


@dataclass(frozen=True, slots=True)
class Report:
    """What the controls did to one answer's candidates (all of them, before the topK cut)."""

    min_score: float | None
    below_min_score: int  # candidates the floor dropped
    half_life_seconds: int | None
    reference: datetime | None  # the recency reference (None without recencyHalfLife)
    max_per_document: int | None
    over_document_cap: int  # candidates dropped past maxPerDocument


async def apply(
    tx: Tx, refs: Sequence[ScopeRef], ranked: Sequence[Hit], a: Applied, top_k: int, now: datetime
) -> tuple[list[Hit], Report | None]:
    """The floor, then the per-document cap, over the fused ranking; the report is None when
    no control was given."""
    floored = floor(ranked, a, top_k)
    capped = await cap_per_document(tx, refs, floored, a)
    if a == Applied():
        return capped, None
    hl = None if a.half_life is None else int(a.half_life.total_seconds())
    reference = None if a.half_life is None else a.reference or now
    below, over = len(ranked) - len(floored), len(floored) - len(capped)
    return capped, Report(a.min_score, below, hl, reference, a.max_per_document, over)


def check(c: Controls, reference: datetime | None) -> Applied:
    """Bad values are refused with the field's name, never clamped or ignored."""
    if c.min_score is not None and not (math.isfinite(c.min_score) and -1 <= c.min_score <= 1):
        raise InvalidArgument("minScore (min_score) must be a cosine between -1 and 1")
    n = c.max_per_document
    if n is not None and not 1 <= n <= MAX_PER_DOCUMENT:
        raise InvalidArgument(
            f"maxPerDocument (max_per_document) must be between 1 and {MAX_PER_DOCUMENT}"
        )
    half_life = parse_half_life(c.recency_half_life)
    return Applied(c.min_score, half_life, reference if half_life else None, n, c.fulltext_within)


def parse_half_life(text: str | None) -> timedelta | None:
    if text is None:
        return None
    m = _HALF_LIFE.match(text.strip().lower())
    seconds = 0 if m is None else int(m[1]) * _UNIT[m[2]]
    if not 0 < seconds <= MAX_HALF_LIFE.total_seconds():
        raise InvalidArgument(
            "recencyHalfLife (recency_half_life) must be a positive duration of at most "
            f"{MAX_HALF_LIFE.days}d, like 30d, 12h, 2w, 90m or 45s, not {text[:40]!r}"
        )
    return timedelta(seconds=seconds)


def leg_weights(given: LegWeights | None, vector: float, fulltext: float) -> tuple[float, float]:
    """The legs' weights: the caller's where given, else the server's settings."""
    if given is None:
        return vector, fulltext
    for name, value in (("vector", given.vector), ("fulltext", given.fulltext)):
        if value is not None and not (math.isfinite(value) and 0 <= value <= MAX_WEIGHT):
            raise InvalidArgument(f"weights.{name} must be between 0 and {MAX_WEIGHT:g}")
    out = (
        vector if given.vector is None else given.vector,
        fulltext if given.fulltext is None else given.fulltext,
    )
    if out == (0, 0):
        raise InvalidArgument("weights.vector and weights.fulltext cannot both be 0")
    return out


def weigh_recency(hits: Sequence[Hit], a: Applied, now: datetime) -> list[Hit]:
    """Multiply each dated hit's score by ``2^(-age / halfLife)`` (a boost; never a filter).
    The hits weighed, in the same order."""
    if a.half_life is None:
        return list(hits)
    at, half_life = a.reference or now, a.half_life.total_seconds()
    out: list[Hit] = []
    for hit in hits:
        if hit.observed_at is None:
            out.append(hit)
            continue
        age = max((at - hit.observed_at).total_seconds(), 0.0)
        factor = 2.0 ** (-age / half_life)
        explain = hit.explain
        if explain is not None:
            explain = replace(explain, boosts=[*explain.boosts, BoostPart(RECENCY, factor)])
        out.append(replace(hit, score=hit.score * factor, explain=explain))
    return out


def floor(hits: Sequence[Hit], a: Applied, top_k: int) -> list[Hit]:
    """The hits that pass ``minScore``, each with its verdict in ``explain.floor``."""
    if a.min_score is None:
        return list(hits)
    within = top_k if a.fulltext_within is None else a.fulltext_within
    kept: list[Hit] = []
    for hit in hits:
        if hit.cosine is not None:
            by = "cosine" if hit.cosine >= a.min_score else None
        else:
            by = (
                "fulltext"
                if hit.fulltext_rank is not None and hit.fulltext_rank <= within
                else None
            )
        if by is not None:
            if hit.explain is not None:
                hit = replace(hit, explain=replace(hit.explain, floor=by))
            kept.append(hit)
    return kept


async def chunk_documents(
    tx: Tx, refs: Sequence[ScopeRef], hits: Sequence[Hit]
) -> dict[tuple[str, str], str]:
    """(scope, chunk id) -> document id of the chunk candidates, read per scope."""
    documents: dict[tuple[str, str], str] = {}
    for ref in refs:
        ids = [h.id for h in hits if h.scope == ref.scope and h.kind is pure.Source.DOCUMENTS]
        if ids:
            for row in await tx.scoped(ref).run(q.CHUNK_DOCUMENTS, {"ids": ids}):
                documents[(ref.scope.value, row["id"])] = row["document_id"]
    return documents


async def cap_per_document(
    tx: Tx, refs: Sequence[ScopeRef], ranked: Sequence[Hit], a: Applied
) -> list[Hit]:
    """At most ``maxPerDocument`` hits per document, best first; others are not limited.
    The chunks' documents are read per scope, in the recall's own transaction."""
    cap = a.max_per_document
    if cap is None:
        return list(ranked)
    documents = await chunk_documents(tx, refs, ranked)
    seen: dict[tuple[str, str], int] = {}
    kept: list[Hit] = []
    for hit in ranked:
        doc = (
            documents.get((hit.scope.value, hit.id)) if hit.kind is pure.Source.DOCUMENTS else None
        )
        if doc is None:
            kept.append(hit)
            continue
        place = seen.get((hit.scope.value, doc), 0) + 1
        seen[(hit.scope.value, doc)] = place
        if place <= cap:
            if hit.explain is not None:
                hit = replace(hit, explain=replace(hit.explain, document_place=place))
            kept.append(hit)
    return kept
