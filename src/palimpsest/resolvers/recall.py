"""Hybrid recall (SPEC section 5): one query embedding, a vector and a full-text leg per kind
and scope, fused by Reciprocal Rank Fusion.

The planner keeps small scopes exact: every vector leg filters on the scope inside the index;
when the index returns fewer rows than asked, the scope is smaller than the pool (or the ANN
search read short), so the leg is re-run as an exact scan of the scope. When row filters
(expiry, prefix, validity) leave the pool short, the leg is re-run with a larger pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from palimpsest import recall as pure
from palimpsest.cypher import recall as q
from palimpsest.cypher.executor import Row, Statement
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers.common import provenance_from
from palimpsest.resolvers.facts import TimeView, fact_from
from palimpsest.resolvers.services import Services
from palimpsest.schema.models import Fact, Provenance

MAX_POOL = 200  # also the largest top_k the resolver serves (the API allows 50)
MAX_FETCH = 2000
# The approximate search is asked for at least this many rows, whatever the pool: a larger
# LIMIT widens its search, so the top of a small pool is as good as an exact scan's.
ANN_FLOOR = 50
MAX_QUERY_CHARS = 4000


class Mode(StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    FULLTEXT = "fulltext"


# Per kind: the in-index vector leg, its exact fallback, and the full-text leg.
LEGS: dict[pure.Source, tuple[Statement, Statement, Statement]] = {
    pure.Source.NOTES: (q.VECTOR_MEMORY, q.EXACT_MEMORY, q.FULLTEXT_MEMORY),
    pure.Source.DOCUMENTS: (q.VECTOR_CHUNKS, q.EXACT_CHUNKS, q.FULLTEXT_CHUNKS),
    pure.Source.FACTS: (q.VECTOR_FACTS, q.EXACT_FACTS, q.FULLTEXT_FACTS),
}


@dataclass(frozen=True, slots=True)
class RecallRequest:
    query: str
    top_k: int
    sources: frozenset[pure.Source]
    view: TimeView
    window: pure.Window | None = None
    prefix: str = ""
    rrf_k: int = pure.DEFAULT_RRF_K
    vector_weight: float = 1.0
    fulltext_weight: float = 1.0
    mode: Mode = Mode.HYBRID
    pool: int | None = None  # candidates per leg; default pool_factor x top_k, capped
    pool_factor: int = 2


@dataclass(slots=True)
class Hit:
    kind: pure.Source
    scope: Scope
    id: str
    text: str
    score: float = 0.0
    cosine: float | None = None
    fulltext_score: float | None = None
    vector_rank: int | None = None
    fulltext_rank: int | None = None
    key: str | None = None
    document_id: str | None = None
    chunk_type: str | None = None
    fact: Fact | None = None
    observed_at: datetime | None = None
    created_at: datetime | None = None
    provenance: Provenance | None = None
    in_window: bool | None = None
    dated: bool = False  # has a validity interval (facts and notes)


@dataclass(frozen=True, slots=True)
class TimeFilterReport:
    mode: str
    slack_seconds: int
    in_window: int
    out_of_window: int
    undated: int


@dataclass(frozen=True, slots=True)
class RecallResult:
    hits: list[Hit]
    sources_applied: bool = False  # only the code that applied the selector sets it true
    time_filter: TimeFilterReport | None = None
    scopes: list[Scope] = field(default_factory=list)


async def recall(
    svc: Services, who: Principal, scopes: Sequence[Scope], req: RecallRequest
) -> RecallResult:
    refs = [resolve_scope(who, s) for s in dict.fromkeys(scopes)]
    if not refs:
        raise InvalidArgument("give at least one scope")
    if not req.query.strip() or len(req.query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query must be 1-{MAX_QUERY_CHARS} characters")
    if not 1 <= req.top_k <= MAX_POOL:
        raise InvalidArgument(f"topK must be between 1 and {MAX_POOL}")
    pool = req.pool or min(req.pool_factor * req.top_k, MAX_POOL)
    vector = None if req.mode is Mode.FULLTEXT else (await svc.embed([req.query]))[0]
    base = {"prefix": req.prefix, "now": svc.clock(), **req.view.params()}
    legs = [
        _leg(svc, ref, kind, vector, req.query, pool, base, fulltext)
        for ref in refs
        for kind in sorted(req.sources)
        for fulltext in (False, True)
        if (fulltext and req.mode is not Mode.VECTOR) or (not fulltext and vector is not None)
    ]
    found: dict[tuple[str, str, str], Hit] = {}
    vector_list: list[tuple[float, tuple[str, str, str]]] = []
    text_list: list[tuple[float, tuple[str, str, str]]] = []
    dropped: set[tuple[str, str, str]] = set()
    for fulltext, hits, filtered in await asyncio.gather(*legs):
        dropped |= filtered
        for hit in hits:
            ident = (hit.kind.value, hit.scope.value, hit.id)
            kept = found.setdefault(ident, hit)
            if fulltext:
                kept.fulltext_score = hit.fulltext_score
                text_list.append((hit.fulltext_score or 0.0, ident))
            else:
                kept.cosine = hit.cosine
                vector_list.append((hit.cosine or 0.0, ident))
    report = _apply_window(req.window, found) if req.window else None
    if report is None and req.view.as_of_given:
        report = _as_of_report(found, dropped)
    fused = pure.rrf(
        {
            "vector": [_key(i) for _, i in sorted(vector_list, key=lambda p: -p[0]) if i in found],
            "fulltext": [_key(i) for _, i in sorted(text_list, key=lambda p: -p[0]) if i in found],
        },
        k=req.rrf_k,
        weights={"vector": req.vector_weight, "fulltext": req.fulltext_weight},
    )
    by_key = {_key(i): h for i, h in found.items()}
    ranked: list[Hit] = []
    for f in fused:
        hit = by_key[f.id]
        hit.score = f.score
        hit.vector_rank = f.ranks.get("vector")
        hit.fulltext_rank = f.ranks.get("fulltext")
        ranked.append(hit)
    if req.window and req.window.missing is pure.Missing.PREFER:
        # Prefer ranks: in-window first, then undated, then out-of-window; stable otherwise.
        ranked.sort(key=lambda h: 0 if h.in_window else 1 if h.in_window is None else 2)
    return RecallResult(
        hits=ranked[: req.top_k],
        sources_applied=True,
        time_filter=report,
        scopes=[r.scope for r in refs],
    )


async def _leg(
    svc: Services,
    ref: ScopeRef,
    kind: pure.Source,
    vector: list[float] | None,
    text: str,
    pool: int,
    base: dict[str, Any],
    fulltext: bool,
) -> tuple[bool, list[Hit], set[tuple[str, str, str]]]:
    """One leg: (is full-text, its hits in rank order, the facts the time view dropped)."""
    ann, exact, lucene_leg = LEGS[kind]
    params: dict[str, Any] = dict(base)
    if fulltext:
        lucene = pure.lucene_query(ref.scope_key, text)
        if lucene is None:
            return True, [], set()
        params["lucene"] = lucene
        statement = lucene_leg
    else:
        params["vector"] = vector
        statement = ann
    k = pool
    while True:
        ask = max(k, ANN_FLOOR) if statement is ann else k
        rows = await svc.db.scoped(ref).read(statement, {**params, "k": ask})
        live = [r for r in rows if r["live"]]
        if len(live) >= pool or k >= MAX_FETCH:
            break
        if len(rows) < ask:
            if fulltext or statement is exact:
                break
            statement = exact  # fewer rows than asked: small scope or a short ANN read
            continue
        k = min(k * 4, MAX_FETCH)  # filters thinned a full page: over-fetch
    hits = [_hit(kind, r, fulltext) for r in live[:pool]]
    # Facts and notes have a validity to be outside of; chunks are dropped only as roots.
    filtered: set[tuple[str, str, str]] = set()
    if kind is pure.Source.FACTS:
        filtered = {(kind.value, ref.scope.value, r["fact"]["id"]) for r in rows if not r["live"]}
    elif kind is pure.Source.NOTES:
        filtered = {(kind.value, ref.scope.value, r["row"]["key"]) for r in rows if r["untimely"]}
    return fulltext, hits, filtered


def _hit(kind: pure.Source, row: Row, fulltext: bool) -> Hit:
    """A hit names the scope its row is stored in (not the scope that was asked for)."""
    score = float(row["score"])
    signal: dict[str, Any] = (
        {"fulltext_score": score} if fulltext else {"cosine": 2.0 * score - 1.0}
    )
    if kind is pure.Source.FACTS:
        fact = fact_from(Scope(row["fact"]["scope"]), row)
        return Hit(
            kind,
            fact.scope,
            fact.id,
            fact.text,
            fact=fact,
            dated=fact.valid_at is not None or fact.invalid_at is not None,
            observed_at=fact.observed_at,
            created_at=fact.created_at,
            provenance=fact.provenance,
            **signal,
        )
    r = row["row"]
    scope = Scope(r["scope"])
    if kind is pure.Source.NOTES:
        return Hit(
            kind,
            scope,
            r["key"],
            r["text"] or "",
            key=r["key"],
            observed_at=r["observed_at"],
            created_at=r["created_at"],
            provenance=provenance_from(r),
            dated=r["valid_at"] is not None or r["invalid_at"] is not None,
            **signal,
        )
    return Hit(
        kind,
        scope,
        r["id"],
        r["text"],
        document_id=r["document_id"],
        chunk_type=r["type"],
        observed_at=r["observed_at"],
        created_at=r["created_at"],
        provenance=provenance_from(r),
        **signal,
    )


def _apply_window(window: pure.Window, found: dict[tuple[str, str, str], Hit]) -> TimeFilterReport:
    counts = {True: 0, False: 0, None: 0}
    for ident, hit in list(found.items()):
        hit.in_window = window.contains(hit.observed_at)
        counts[hit.in_window] += 1
        if window.missing is pure.Missing.REQUIRE and not hit.in_window:
            del found[ident]
    return TimeFilterReport(
        mode=window.missing.value,
        slack_seconds=int(window.slack.total_seconds()),
        in_window=counts[True],
        out_of_window=counts[False],
        undated=counts[None],
    )


def _as_of_report(
    found: dict[tuple[str, str, str], Hit], dropped: set[tuple[str, str, str]]
) -> TimeFilterReport:
    """For an as_of/known_at read: kept facts and notes with an interval, those the time view
    (or, for facts, a refuting verdict) dropped, and candidates with no interval at all."""
    dated = sum(1 for h in found.values() if h.dated)
    return TimeFilterReport(
        mode="as_of",
        slack_seconds=0,
        in_window=dated,
        out_of_window=len(dropped - found.keys()),
        undated=len(found) - dated,
    )


def _key(ident: tuple[str, str, str]) -> str:
    return "\x1f".join(ident)
