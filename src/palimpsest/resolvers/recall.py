"""Hybrid recall (SPEC section 5): per scope and kind of row, a vector leg and a scope-local
BM25 leg, each a ranked list; the lists are fused by Reciprocal Rank Fusion, then soft
preferences read from the question (dates, "when", years, a named speaker) boost the fused
score. Nothing from another scope reaches a score, a rank or the candidate pools.

The plan for one request: read the scopes' term statistics (one transaction), embed the
query (without the speakers it names, lever 3), run every leg concurrently
(``recall_legs``), load the rows fusion may keep (one transaction per scope), then filter,
fuse, boost and explain.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from palimpsest import cues, fulltext
from palimpsest import recall as pure
from palimpsest import recall_timing as timing
from palimpsest.cypher.executor import Row, ScopedTx, Tx
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers import recall_legs as legs
from palimpsest.resolvers.common import provenance_from
from palimpsest.resolvers.facts import TimeView, fact_from
from palimpsest.resolvers.services import Services
from palimpsest.schema.models import Fact, Provenance

MAX_POOL = 200  # also the largest top_k the resolver serves (the API allows 50)
MAX_FETCH = legs.MAX_FETCH
ANN_FLOOR = legs.ANN_FLOOR
MAX_QUERY_CHARS = 4000
Ident = tuple[str, str, str]  # (kind, scope, id)


class Mode(StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    FULLTEXT = "fulltext"


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
    levers: pure.Levers = field(default_factory=pure.Levers)


@dataclass(frozen=True, slots=True)
class LegPart:
    """One ranked list's share of a hit's score: ``weight / (k + rank)``."""

    leg: str  # vector | fulltext
    rank: int
    contribution: float
    value: float  # the leg's own score: cosine, or scope-local BM25


@dataclass(frozen=True, slots=True)
class BoostPart:
    lever: str  # observedDate | whenQuestion | yearRange | speaker
    factor: float


@dataclass(frozen=True, slots=True)
class Explain:
    legs: list[LegPart]
    boosts: list[BoostPart]
    fused: float  # the RRF sum before boosts


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
    years: list[int] | None = None
    has_time: bool = False
    speaker: str | None = None
    explain: Explain | None = None
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


@dataclass(frozen=True, slots=True)
class _List:
    """One ranked list of one leg, kind and scope."""

    leg: str
    source: pure.Source
    ref: ScopeRef
    ranked: legs.Ranked


async def recall(
    svc: Services, who: Principal, scopes: Sequence[Scope], req: RecallRequest
) -> RecallResult:
    with timing.timed("resolver"):
        return await _recall(svc, who, scopes, req)


async def _recall(
    svc: Services, who: Principal, scopes: Sequence[Scope], req: RecallRequest
) -> RecallResult:
    refs = [resolve_scope(who, s) for s in dict.fromkeys(scopes)]
    if not refs:
        raise InvalidArgument("give at least one scope")
    if not req.query.strip() or len(req.query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query must be 1-{MAX_QUERY_CHARS} characters")
    if not 1 <= req.top_k <= MAX_POOL:
        raise InvalidArgument(f"topK must be between 1 and {MAX_POOL}")
    lv = req.levers
    pool = req.pool or min(req.pool_factor * req.top_k, MAX_POOL)
    sources = sorted(req.sources)
    terms = [] if req.mode is Mode.VECTOR else fulltext.query_terms(req.query, lv.question_words)
    want_speakers = lv.speaker_strip or lv.speaker_boost > 1.0

    async def stats_of(tx: Tx) -> list[legs.ScopeStats]:
        return [await legs.read_stats(tx.scoped(r), sources, terms, want_speakers) for r in refs]

    with timing.timed("stats"):
        stats = await svc.db.read_tx(stats_of)
    question = cues.read_question(req.query, {s for st in stats for s in st.speakers})
    vector: list[float] | None = None
    if req.mode is not Mode.FULLTEXT:
        text = (
            cues.without_speakers(req.query, question.speakers) if lv.speaker_strip else req.query
        )
        with timing.timed("embedding"):
            vector = list((await svc.embed([text]))[0])
    base = {"prefix": req.prefix, "now": svc.clock(), **req.view.params()}

    async def run(ref: ScopeRef, source: pure.Source, leg: str, st: legs.ScopeStats) -> _List:
        kind = st.of(source)

        async def work(tx: ScopedTx) -> legs.Ranked:
            if leg == "vector":
                assert vector is not None
                return await legs.vector_leg(
                    tx, source, vector, pool, base, kind.rows, lv.exact_max_rows
                )
            return await legs.fulltext_leg(tx, source, terms, kind, pool, base, lv.k1, lv.b)

        with timing.timed(f"{leg}_{source.value}"):
            return _List(leg, source, ref, await svc.db.scoped(ref).read_tx(work))

    jobs = [
        run(ref, source, leg, st)
        for ref, st in zip(refs, stats, strict=True)
        for source in sources
        for leg in ("vector", "fulltext")
        if (leg == "vector" and vector is not None)
        or (leg == "fulltext" and terms and st.of(source).rows > 0)
    ]
    with timing.timed("legs"):
        lists = list(await asyncio.gather(*jobs))
    with timing.timed("load"):
        found = await _load(svc, refs, lists)
    with timing.timed("fusion"):
        return _rank(req, refs, lists, found, question)


def _rank(
    req: RecallRequest,
    refs: list[ScopeRef],
    lists: list[_List],
    found: dict[Ident, Hit],
    question: cues.QuestionCues,
) -> RecallResult:
    lv = req.levers
    # Facts and notes have a validity to be outside of; chunks drop out only as roots.
    dropped = {
        (lst.source.value, lst.ref.scope.value, i)
        for lst in lists
        if lst.source is not pure.Source.DOCUMENTS
        for i in lst.ranked.dropped
    }
    report = _apply_window(req.window, found) if req.window else None
    if report is None and req.view.as_of_given:
        report = _as_of_report(found, dropped)
    ranked = _fuse(req, lists, found)
    _boost(ranked, question, lv)
    ranked.sort(key=lambda h: -h.score)
    if req.window and req.window.missing is pure.Missing.PREFER:
        # Prefer ranks: in-window first, then undated, then out-of-window; stable otherwise.
        ranked.sort(key=lambda h: 0 if h.in_window else 1 if h.in_window is None else 2)
    return RecallResult(
        hits=ranked[: req.top_k],
        sources_applied=True,
        time_filter=report,
        scopes=[r.scope for r in refs],
    )


async def _load(svc: Services, refs: list[ScopeRef], lists: list[_List]) -> dict[Ident, Hit]:
    """Load every candidate row once: one transaction per scope."""

    async def one(ref: ScopeRef) -> list[tuple[pure.Source, dict[str, Row]]]:
        wanted: dict[pure.Source, list[str]] = {}
        for lst in lists:
            if lst.ref is ref:
                ids = wanted.setdefault(lst.source, [])
                ids += [i for i in lst.ranked.ids if i not in ids]

        async def work(tx: ScopedTx) -> list[tuple[pure.Source, dict[str, Row]]]:
            return [(s, await legs.load(tx, s, ids)) for s, ids in sorted(wanted.items())]

        return await svc.db.scoped(ref).read_tx(work) if wanted else []

    found: dict[Ident, Hit] = {}
    for ref, loaded in zip(refs, await asyncio.gather(*(one(r) for r in refs)), strict=True):
        for source, rows in loaded:
            for row_id, row in rows.items():
                hit = _hit(source, row)
                found[(source.value, ref.scope.value, row_id)] = hit
    return found


def _fuse(req: RecallRequest, lists: list[_List], found: dict[Ident, Hit]) -> list[Hit]:
    """RRF over ranked lists, one per (leg, kind, scope): raw scores from different indexes
    or scopes are never compared, only ranks within one list."""
    named: dict[str, list[str]] = {}
    weights: dict[str, float] = {}
    values: dict[tuple[str, str], float] = {}
    for lst in lists:
        name = f"{lst.leg}\x1f{lst.source.value}\x1f{lst.ref.scope.value}"
        idents = [(lst.source.value, lst.ref.scope.value, i) for i in lst.ranked.ids]
        named[name] = [_key(i) for i in idents if i in found]
        weights[name] = req.vector_weight if lst.leg == "vector" else req.fulltext_weight
        for ident in idents:
            values[(lst.leg, _key(ident))] = lst.ranked.scores[ident[2]]
    by_key = {_key(i): h for i, h in found.items()}
    out: list[Hit] = []
    for f in pure.rrf(named, k=req.rrf_k, weights=weights):
        hit = by_key[f.id]
        parts: list[LegPart] = []
        for name, rank in f.ranks.items():
            leg = name.split("\x1f", 1)[0]
            value = values[(leg, f.id)]
            parts.append(LegPart(leg, rank, weights[name] / (req.rrf_k + rank), value))
            if leg == "vector":
                hit.vector_rank, hit.cosine = rank, value
            else:
                hit.fulltext_rank, hit.fulltext_score = rank, value
        hit.score = f.score
        hit.explain = Explain(parts, [], f.score)
        out.append(hit)
    return out


def _boost(hits: list[Hit], q: cues.QuestionCues, lv: pure.Levers) -> None:
    """Soft preferences from the question (levers 3 and 5): multiply, never filter."""
    speaker = q.speakers[0] if len(q.speakers) == 1 else None
    for hit in hits:
        boosts: list[BoostPart] = []
        if lv.date_boost > 1.0 and q.date_match(hit.observed_at):
            boosts.append(BoostPart("observedDate", lv.date_boost))
        if lv.when_boost > 1.0 and q.when and hit.has_time:
            boosts.append(BoostPart("whenQuestion", lv.when_boost))
        if lv.year_boost > 1.0 and q.year_match(hit.years):
            boosts.append(BoostPart("yearRange", lv.year_boost))
        if lv.speaker_boost > 1.0 and speaker is not None and hit.speaker == speaker:
            boosts.append(BoostPart("speaker", lv.speaker_boost))
        for b in boosts:
            hit.score *= b.factor
        if hit.explain is not None:
            hit.explain.boosts.extend(boosts)


def _hit(kind: pure.Source, row: Row) -> Hit:
    """A hit names the scope its row is stored in (not the scope that was asked for)."""
    if kind is pure.Source.FACTS:
        fact = fact_from(Scope(row["fact"]["scope"]), row)
        return Hit(
            kind,
            fact.scope,
            fact.id,
            fact.text,
            fact=fact,
            observed_at=fact.observed_at,
            created_at=fact.created_at,
            provenance=fact.provenance,
            years=row.get("years"),
            has_time=bool(row.get("has_time")),
            dated=fact.valid_at is not None or fact.invalid_at is not None,
        )
    r = row["row"]
    scope = Scope(r["scope"])
    common: dict[str, Any] = {
        "created_at": r["created_at"],
        "provenance": provenance_from(r),
        "years": r.get("years"),
        "has_time": bool(r.get("has_time")),
        "speaker": r.get("speaker"),
    }
    if kind is pure.Source.NOTES:
        dated = r.get("valid_at") is not None or r.get("invalid_at") is not None
        return Hit(
            kind,
            scope,
            r["key"],
            r["text"] or "",
            key=r["key"],
            observed_at=r.get("observed_at"),
            dated=dated,
            **common,
        )
    return Hit(
        kind,
        scope,
        r["id"],
        r["text"],
        document_id=r["document_id"],
        chunk_type=r["type"],
        observed_at=r["observed_at"],
        **common,
    )


def _apply_window(window: pure.Window, found: dict[Ident, Hit]) -> TimeFilterReport:
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


def _as_of_report(found: dict[Ident, Hit], dropped: set[Ident]) -> TimeFilterReport:
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


def _key(ident: Ident) -> str:
    return "\x1f".join(ident)
