"""Hybrid recall (docs/spec.md, Recall and search): per scope and kind of row, a vector leg
and a scope-local BM25 leg, each a ranked list; the lists are fused by Reciprocal Rank Fusion,
then soft preferences read from the question (dates, "when", years, a named speaker) boost the
fused score. Nothing from another scope reaches a score, a rank or the candidate pools.

The plan for one request, two read sessions running concurrently:

- the text side reads the scopes' term statistics, then runs every full-text leg;
- the vector side waits for the statistics (the speakers a question names leave the
  embedded text, lever 3, and a scope's size picks the exact or the approximate leg), embeds
  the query meanwhile the full-text legs run, runs every vector leg, then takes the text
  side's lists, filters, fuses, boosts and explains, and loads the top-k in the same
  transaction (one statement per scope, ``recall_hits.load``), reading only the rows no
  leg returned (``Ranked.rows``, ``_carried``).

A full-text-only request runs everything in the text side's one transaction. Each stage is
timed (``recall_timing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from datetime import datetime
from typing import Any, TypeVar

from palimpsest.cypher.driver.executor import Tx
from palimpsest.domain.ranking import cues, fulltext
from palimpsest.domain.ranking import fusion as pure
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers.recall import controls as recall_controls
from palimpsest.resolvers.recall import dedup as recall_dedup
from palimpsest.resolvers.recall import entities as recall_entities
from palimpsest.resolvers.recall import forms as recall_forms
from palimpsest.resolvers.recall import fusion, legs, past, timing
from palimpsest.resolvers.recall import hits as hits_of
from palimpsest.resolvers.recall import newer as recall_newer
from palimpsest.resolvers.recall import sessions as recall_sessions
from palimpsest.resolvers.recall.controls import Report as ControlsReport
from palimpsest.resolvers.recall.fusion import RankedList
from palimpsest.resolvers.recall.hits import (
    BoostPart,
    Explain,
    Hit,
    Ident,
    LegPart,
    TimeFilterReport,
)
from palimpsest.resolvers.recall.request import Mode, RecallRequest
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import retention

MAX_POOL = 200  # also the largest top_k the resolver serves (the API allows 50)
MAX_FETCH = legs.MAX_FETCH
ANN_FLOOR = legs.ANN_FLOOR
MAX_QUERY_CHARS = 4000
T = TypeVar("T")
__all__ = [
    "BoostPart",
    "ControlsReport",
    "Explain",
    "Hit",
    "LegPart",
    "Mode",
    "RecallRequest",
    "RecallResult",
    "TimeFilterReport",
    "recall",
]


@dataclass(frozen=True, slots=True)
class RecallResult:
    hits: list[Hit]
    sources_applied: bool = False  # only the code that applied the selector sets it true
    time_filter: TimeFilterReport | None = None
    scopes: list[Scope] = field(default_factory=list)
    legs_rows: int = 0  # rows the legs ranked, summed (set only when fusion is off)
    # Which temporal filters each kind of row was read with (recall_past.applied_filters).
    applied_filters: list[past.KindFilter] = field(default_factory=list)
    controls: recall_controls.Report | None = None  # what the per-call controls did


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
    req = recall_forms.apply(req)  # the question's form and its weights
    lv = req.levers
    pool = req.pool or min(req.pool_factor * req.top_k, MAX_POOL)
    sources = sorted(req.sources)
    terms = [] if req.mode is Mode.VECTOR else fulltext.query_terms(req.query, lv.question_words)
    want_speakers = lv.speaker_strip or lv.speaker_boost > 1.0
    base = {"prefix": req.prefix, "now": svc.clock(), **req.view.params()}
    # Notes known at a past time are read from their versions (recall_past.py).
    notes_past = past.reads_past(req.view.known_at, base["now"])
    notes, documents = pure.Source.NOTES in sources, pure.Source.DOCUMENTS in sources
    if notes_past and (notes or documents):  # never as if swept history had not been
        for ref in refs:
            db = svc.db.scoped(ref)
            await retention.check_known_at(db, req.view.known_at, notes=notes, documents=documents)
    stats_read: asyncio.Future[list[legs.ScopeStats]] = asyncio.get_running_loop().create_future()
    spans: list[tuple[float, float]] = []  # each leg's start and end, for the "legs" stage

    async def leg(stage: str, work: Awaitable[T]) -> T:
        started = time.perf_counter()
        try:
            return await work
        finally:
            ended = time.perf_counter()
            spans.append((started, ended))
            timing.observe(stage, ended - started)

    async def text_side(tx: Tx) -> list[RankedList]:
        # The statistics, and each kind's rows where they are few (recall_text), per scope.
        held = [s for s in sources if not (notes_past and s is pure.Source.NOTES)]
        with timing.timed("stats"):
            read = [
                await legs.read_text_side(tx.scoped(r), sources, terms, want_speakers, base, held)
                for r in refs
            ]
        stats = [st for st, _ in read]
        if not stats_read.done():  # a retried transaction reads them again
            stats_read.set_result(stats)
        lists: list[RankedList] = []
        for ref, (st, rows) in zip(refs, read, strict=True):
            mine: list[RankedList] = []
            for source in sources:
                kind = st.of(source)
                if terms and notes_past and source is pure.Source.NOTES:
                    work = past.fulltext_leg(tx.scoped(ref), terms, kind, pool, base, lv.k1, lv.b)
                    ranked = await leg(f"fulltext_{source.value}", work)
                    mine.append(RankedList("fulltext", source, ref, ranked))
                elif terms and kind.rows > 0:
                    work = legs.fulltext_leg(
                        tx.scoped(ref),
                        source,
                        terms,
                        kind,
                        pool,
                        base,
                        lv.k1,
                        lv.b,
                        held=rows.get(source),
                    )
                    ranked = await leg(f"fulltext_{source.value}", work)
                    mine.append(RankedList("fulltext", source, ref, ranked))
            # What a hit shows of the held legs' notes and chunks, in one statement.
            held_lists = {one.source: one.ranked for one in mine if one.source in rows}
            shown = await legs.held_hits(tx.scoped(ref), held_lists)
            lists += [dc_replace(one, ranked=shown.get(one.source, one.ranked)) for one in mine]
        return lists

    async def finish(tx: Tx, lists: list[RankedList], question: cues.QuestionCues) -> RecallResult:
        if spans:
            timing.observe("legs", max(e for _, e in spans) - min(s for s, _ in spans))
        if not req.fuse:
            rows = sum(len(one.ranked.ids) for one in lists)
            return RecallResult(hits=[], scopes=[r.scope for r in refs], legs_rows=rows)
        with timing.timed("fusion"):
            ranked, report = _rank(req, refs, lists, question, pool, base["now"])
        prefer = req.window is not None and req.window.missing is pure.Missing.PREFER
        if lv.entity_weight > 0:
            ranked, steps = await recall_entities.apply(
                tx, refs, ranked, entity_plan(question), _carried(lists)
            )
            lists += [
                RankedList(recall_entities.ENTITIES, s.source, s.ref, s.ranked) for s in steps
            ]
            if prefer:
                ranked.sort(key=lambda h: 0 if h.in_window else 1 if h.in_window is None else 2)
        ranked = await recall_sessions.apply(
            tx, refs, ranked, req.levers.session_prior, req.rrf_k, prefer
        )
        ranked, controlled = await recall_controls.apply(
            tx, refs, ranked, req.controls, req.top_k, base["now"]
        )
        if req.dedup is not None:
            ranked = await recall_dedup.drop_duplicates(tx, refs, ranked, req.top_k, req.dedup)
        ranked = await recall_newer.apply(tx, refs, ranked, lv.newer_first, req.top_k)
        with timing.timed("load"):
            hits = await hits_of.load(
                tx,
                refs,
                ranked[: req.top_k],
                who,
                req.view.known_at,
                base if notes_past else None,
                _carried(lists) if req.view.known_at is None else None,
            )
        return RecallResult(
            hits=hits,
            sources_applied=True,
            time_filter=report,
            scopes=[r.scope for r in refs],
            applied_filters=past.applied_filters(
                sources, req.window is not None, req.view.known_at
            ),
            controls=controlled,
        )

    def entity_plan(question: cues.QuestionCues) -> recall_entities.Plan:
        speakers = {s for st in stats_read.result() for s in st.speakers}
        kinds = [s for s in sources if not (notes_past and s is pure.Source.NOTES)]

        def boost(new: list[Hit]) -> None:
            fusion.boost(new, question, lv)
            recall_controls.weigh_recency(new, req.controls, base["now"])

        return recall_entities.plan_of(
            terms, speakers, kinds, pool, base, lv, req.rrf_k, req.window, boost
        )

    def question_of(stats: list[legs.ScopeStats]) -> cues.QuestionCues:
        anchor = req.window.end if req.window is not None and req.window.end else base["now"]
        return cues.read_question(req.query, {s for st in stats for s in st.speakers}, anchor)

    if req.mode is Mode.FULLTEXT:

        async def text_only(tx: Tx) -> RecallResult:
            lists = await text_side(tx)
            return await finish(tx, lists, question_of(stats_read.result()))

        return await svc.db.read_tx(text_only)

    text_lists = asyncio.ensure_future(svc.db.read_tx(text_side))
    try:
        either: list[asyncio.Future[Any]] = [stats_read, text_lists]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not stats_read.done():
            await text_lists  # it failed before the statistics were read: raises
        stats = stats_read.result()
        question = question_of(stats)
        embedded = (
            cues.without_speakers(req.query, question.speakers) if lv.speaker_strip else req.query
        )
        with timing.timed("embedding"):
            vector = list(await svc.embed_question(who, embedded))

        async def vector_side(tx: Tx) -> RecallResult:
            lists: list[RankedList] = []
            for ref, st in zip(refs, stats, strict=True):
                for source in sources:
                    rows = st.of(source).rows
                    if notes_past and source is pure.Source.NOTES:
                        ranked = await leg(
                            "vector_notes", past.vector_leg(tx.scoped(ref), vector, pool, base)
                        )
                        lists.append(RankedList("vector", source, ref, ranked))
                        continue
                    if rows == 0:
                        # The scope's own count, kept in the rows' own transactions: it holds
                        # no row of this kind, so there is nothing to search.
                        continue
                    work = legs.vector_leg(
                        tx.scoped(ref),
                        source,
                        vector,
                        pool,
                        base,
                        rows,
                        lv.exact_max_rows,
                        lv.ann_floor,
                    )
                    ranked = await leg(f"vector_{source.value}", work)
                    lists.append(RankedList("vector", source, ref, ranked))
                if req.view.known_at is not None and pure.Source.DOCUMENTS in sources:
                    closed = legs.past_chunks_leg(tx.scoped(ref), vector, pool, base)
                    ranked = await leg("vector_documents", closed)
                    lists.append(RankedList("vector", pure.Source.DOCUMENTS, ref, ranked))
            lists += await asyncio.shield(text_lists)
            return await finish(tx, lists, question)

        return await svc.db.read_tx(vector_side)
    finally:
        if not text_lists.done():
            text_lists.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await text_lists


def _rank(
    req: RecallRequest,
    refs: list[ScopeRef],
    lists: list[RankedList],
    question: cues.QuestionCues,
    pool: int,
    now: datetime,
) -> tuple[list[Hit], TimeFilterReport | None]:
    """Candidates from the legs' cues, the time window, RRF, boosts; best first."""
    order = {r.scope: i for i, r in enumerate(refs)}
    # The lists in one fixed order (scope, kind, vector before full-text): RRF keeps the
    # first-seen order on ties, so the answer never depends on which leg finished first.
    lists.sort(key=lambda lst: (order[lst.ref.scope], lst.source, lst.leg != "vector"))
    found: dict[Ident, Hit] = {}
    for lst in lists:
        for i in lst.ranked.ids:
            ident = (lst.source.value, lst.ref.scope.value, i)
            if ident not in found:
                cue = lst.ranked.cues.get(i) or legs.Cues.of(None)
                found[ident] = hits_of.candidate(lst.source, lst.ref.scope, i, cue)
    # Facts and notes have a validity to be outside of; chunks drop out only as roots.
    dropped = {
        (lst.source.value, lst.ref.scope.value, i)
        for lst in lists
        if lst.source is not pure.Source.DOCUMENTS
        for i in lst.ranked.dropped
    }
    report = hits_of.apply_window(req.window, found) if req.window else None
    if report is None and req.view.as_of_given:
        report = hits_of.as_of_report(found, dropped)
    ranked = fusion.fuse(
        lists,
        found,
        pool,
        fusion.Weights(req.rrf_k, req.vector_weight, req.fulltext_weight),
        req.levers.absent_at_depth,
        req.form,
    )
    fusion.boost(ranked, question, req.levers)
    recall_controls.weigh_recency(ranked, req.controls, now)
    ranked.sort(key=lambda h: -h.score)
    if req.window and req.window.missing is pure.Missing.PREFER:
        # Prefer ranks: in-window first, then undated, then out-of-window; stable otherwise.
        ranked.sort(key=lambda h: 0 if h.in_window else 1 if h.in_window is None else 2)
    return ranked, report


def _carried(lists: list[RankedList]) -> dict[Ident, Any]:
    """What a hit shows of each row the legs already read (``Ranked.rows``), so the final
    load reads only the rest."""
    return {
        (lst.source.value, lst.ref.scope.value, i): row
        for lst in lists
        for i, row in lst.ranked.rows.items()
    }
