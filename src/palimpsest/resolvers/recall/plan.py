"""One recall request's plan (docs/spec.md, Recall and search), as an object with named steps.

``RecallPlan.of`` checks the request and reads what every step shares (the scopes, the
question's form and terms, the pool, the time view); ``run`` carries the steps out, two read
sessions running concurrently:

- ``text_side``: the scopes' term statistics, then every full-text leg, in one transaction;
- ``vector_side``: waits for the statistics (the speakers a question names leave the
  embedded text, lever 3, and a scope's size picks the exact or the approximate leg), embeds
  the query meanwhile the full-text legs run, runs every vector leg, then takes the text
  side's lists and ends with ``finish`` in its own transaction;
- ``finish``: filters, fuses, boosts and explains, then loads the top-k (one statement per
  scope, ``hits.load``), reading only the rows no leg returned (``Ranked.rows``, ``_carried``).

A full-text-only request runs ``text_side`` and ``finish`` in one transaction. Each stage is
timed (``timing``). The plan is the planner's own: the doors reach it through ``recall``.

On the procedure engine (``one_round_trip``), a request read as of now runs instead as one
statement per scope (``recall/one.py``: the statistics and every leg), the question embedded
before it is sent; the legs read more only where that statement's answer cannot settle them,
and ``finish`` follows in the same session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from datetime import datetime
from typing import Any, Self, TypeVar

from palimpsest.cypher.driver.executor import Tx
from palimpsest.domain.ranking import cues, fulltext
from palimpsest.domain.ranking import fusion as pure
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers.recall import controls as recall_controls
from palimpsest.resolvers.recall import dedup as recall_dedup
from palimpsest.resolvers.recall import entities as recall_entities
from palimpsest.resolvers.recall import forms as recall_forms
from palimpsest.resolvers.recall import fusion, legs, one, past, timing
from palimpsest.resolvers.recall import hits as hits_of
from palimpsest.resolvers.recall import newer as recall_newer
from palimpsest.resolvers.recall import sessions as recall_sessions
from palimpsest.resolvers.recall.fusion import RankedList
from palimpsest.resolvers.recall.hits import Hit, Ident, TimeFilterReport
from palimpsest.resolvers.recall.request import Mode, RecallRequest
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import retention

MAX_POOL = 200  # also the largest top_k the resolver serves (the API allows 50)
MAX_QUERY_CHARS = 4000
T = TypeVar("T")
__all__ = ["MAX_POOL", "MAX_QUERY_CHARS", "RecallPlan", "RecallResult"]


@dataclass(frozen=True, slots=True)
class RecallResult:
    hits: list[Hit]
    sources_applied: bool = False  # only the code that applied the selector sets it true
    time_filter: TimeFilterReport | None = None
    scopes: list[Scope] = field(default_factory=list)
    # Which temporal filters each kind of row was read with (recall_past.applied_filters).
    applied_filters: list[past.KindFilter] = field(default_factory=list)
    controls: recall_controls.Report | None = None  # what the per-call controls did


@dataclass(slots=True)
class RecallPlan:
    """What the steps of one request share. ``stats`` hands the scopes' term statistics
    from the text side, which reads them first, to the vector side, which waits for them."""

    svc: Services
    who: Principal
    refs: list[ScopeRef]
    req: RecallRequest  # with its question's form applied (``forms.apply``)
    pool: int  # candidates per leg
    sources: list[pure.Source]
    terms: list[str]  # the full-text legs' query terms (none for a vector-only request)
    base: dict[str, Any]  # every leg's parameters: the prefix, now, the time view
    notes_past: bool  # notes are read from their versions, as known at a past time
    stats: asyncio.Future[list[legs.ScopeStats]]
    spans: list[tuple[float, float]] = field(default_factory=list)  # each leg's start, end

    @classmethod
    async def of(
        cls, svc: Services, who: Principal, scopes: Sequence[Scope], req: RecallRequest
    ) -> Self:
        """The plan for ``req``, or ``InvalidArgument``; a read as known at a past time is
        refused where retention has swept that past (never answered as if it had not)."""
        refs = [resolve_scope(who, s) for s in dict.fromkeys(scopes)]
        if not refs:
            raise InvalidArgument("give at least one scope")
        if not req.query.strip() or len(req.query) > MAX_QUERY_CHARS:
            raise InvalidArgument(f"query must be 1-{MAX_QUERY_CHARS} characters")
        if not 1 <= req.top_k <= MAX_POOL:
            raise InvalidArgument(f"topK must be between 1 and {MAX_POOL}")
        req = recall_forms.apply(req)  # the question's form and its weights
        lv = req.levers
        sources = sorted(req.sources)
        terms = (
            [] if req.mode is Mode.VECTOR else fulltext.query_terms(req.query, lv.question_words)
        )
        base = {"prefix": req.prefix, "now": svc.clock(), **req.view.params()}
        # Notes known at a past time are read from their versions (recall_past.py).
        notes_past = past.reads_past(req.view.known_at, base["now"])
        notes, documents = pure.Source.NOTES in sources, pure.Source.DOCUMENTS in sources
        if notes_past and (notes or documents):
            for ref in refs:
                db = svc.db.scoped(ref)
                await retention.check_known_at(
                    db, req.view.known_at, notes=notes, documents=documents
                )
        return cls(
            svc,
            who,
            refs,
            req,
            req.pool or min(req.pool_factor * req.top_k, MAX_POOL),
            sources,
            terms,
            base,
            notes_past,
            asyncio.get_running_loop().create_future(),
        )

    async def run(self) -> RecallResult:
        """The steps: text side and finish in one transaction for a full-text request, else
        the text side beside the vector side, which finishes."""
        if self.one_round_trip():
            return await self._run_one()
        if self.req.mode is Mode.FULLTEXT:
            return await self.svc.db.read_tx(self._text_only)
        text_lists = asyncio.ensure_future(self.svc.db.read_tx(self.text_side))
        try:
            either: list[asyncio.Future[Any]] = [self.stats, text_lists]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if not self.stats.done():
                await text_lists  # it failed before the statistics were read: raises
            question = self._question()
            vector = await self._embed(question)
            return await self.svc.db.read_tx(
                lambda tx: self._vector_then_finish(tx, vector, question, text_lists)
            )
        finally:
            if not text_lists.done():
                text_lists.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await text_lists

    def one_round_trip(self) -> bool:
        """Whether this request runs as one statement per scope (``recall/one.py``): on the
        procedure engine, as of now, without passages."""
        passages = (
            self.svc.settings.recall.passage_max > 0 and pure.Source.DOCUMENTS in self.sources
        )
        return (
            one.ENABLED
            and self.svc.search_engine.name == "procedure"
            and self.req.view.known_at is None
            and not self.notes_past
            and not passages
        )

    async def _run_one(self) -> RecallResult:
        """The question embedded with the speakers its scopes had at their last search (no
        read waits for it), then one statement per scope and the finish, in one session."""
        embedded: str | None = None
        vector: list[float] | None = None
        if self.req.mode is not Mode.FULLTEXT:
            hints = [one.HINTS.get(r.scope_key) for r in self.refs]
            guessed = {s for h in hints if h is not None for s in h.speakers}
            embedded = self._embedded_text(self._question_with(guessed))
            vector = await self._embed_text(embedded)
        return await self.svc.db.read_tx(lambda tx: self._one(tx, embedded, vector))

    async def _one(self, tx: Tx, embedded: str | None, vector: list[float] | None) -> RecallResult:
        lv, pool, base, terms = self.req.levers, self.pool, self.base, self.terms
        want_speakers = lv.speaker_strip or lv.speaker_boost > 1.0
        with timing.timed("one"):
            answers = [
                await one.read(
                    tx.scoped(r),
                    self.sources,
                    terms,
                    want_speakers,
                    base,
                    vector,
                    pool,
                    lv.k1,
                    lv.b,
                    lv.exact_max_rows,
                    lv.ann_floor,
                )
                for r in self.refs
            ]
        if not self.stats.done():  # a retried session reads them again
            self.stats.set_result([a.stats for a in answers])
        question = self._question()
        firsts = vector is not None and self._embedded_text(question) == embedded
        if vector is not None and not firsts:  # the speakers guessed were not the scopes'
            vector = await self._embed(question)
        lists: list[RankedList] = []
        for ref, answer in zip(self.refs, answers, strict=True):
            for source in self.sources:
                kind = answer.stats.of(source)
                if vector is not None and kind.rows > 0:
                    work = legs.vector_leg(
                        tx.scoped(ref),
                        source,
                        vector,
                        pool,
                        base,
                        kind.rows,
                        lv.exact_max_rows,
                        lv.ann_floor,
                        first=answer.vector.get(source) if firsts else None,
                    )
                    ranked = await self._leg(f"vector_{source.value}", work)
                    lists.append(RankedList("vector", source, ref, ranked))
                if terms and kind.rows > 0:
                    found = answer.text.get(source)
                    ranked_text = (
                        None
                        if found is None
                        else one.text_leg(found, terms, kind, pool, lv.k1, lv.b)
                    )
                    if ranked_text is None:
                        leg = legs.fulltext_leg(
                            tx.scoped(ref),
                            source,
                            terms,
                            kind,
                            pool,
                            base,
                            lv.k1,
                            lv.b,
                            engine=self.svc.search_engine.name,
                        )
                        ranked_text = await self._leg(f"fulltext_{source.value}", leg)
                    lists.append(RankedList("fulltext", source, ref, ranked_text))
        return await self.finish(tx, lists, question)

    async def _text_only(self, tx: Tx) -> RecallResult:
        lists = await self.text_side(tx)
        return await self.finish(tx, lists, self._question())

    async def _vector_then_finish(
        self,
        tx: Tx,
        vector: list[float],
        question: cues.QuestionCues,
        text_lists: asyncio.Future[list[RankedList]],
    ) -> RecallResult:
        lists = await self.vector_side(tx, vector)
        lists += await asyncio.shield(text_lists)
        return await self.finish(tx, lists, question)

    def _question(self) -> cues.QuestionCues:
        """What the question asks for (dates, "when", years, a named speaker), read once the
        statistics name the scopes' speakers."""
        return self._question_with({s for st in self.stats.result() for s in st.speakers})

    def _question_with(self, speakers: set[str]) -> cues.QuestionCues:
        req, now = self.req, self.base["now"]
        anchor = req.window.end if req.window is not None and req.window.end else now
        return cues.read_question(req.query, speakers, anchor)

    def _embedded_text(self, question: cues.QuestionCues) -> str:
        """What the vector legs embed: the query, the speakers it names left out (lever 3)."""
        query = self.req.query
        if self.req.levers.speaker_strip:
            query = cues.without_speakers(query, question.speakers)
        return query

    async def _embed(self, question: cues.QuestionCues) -> list[float]:
        """The query's vector, the speakers the question names left out (lever 3)."""
        return await self._embed_text(self._embedded_text(question))

    async def _embed_text(self, text: str) -> list[float]:
        with timing.timed("embedding"):
            return list(await self.svc.embed_question(self.who, text))

    async def text_side(self, tx: Tx) -> list[RankedList]:
        """The statistics, and each kind's rows where they are few (``text``), per scope;
        then every full-text leg."""
        sources, terms, lv = self.sources, self.terms, self.req.levers
        pool, base, notes_past = self.pool, self.base, self.notes_past
        want_speakers = lv.speaker_strip or lv.speaker_boost > 1.0
        held = [s for s in sources if not (notes_past and s is pure.Source.NOTES)]
        with timing.timed("stats"):
            read = [
                await legs.read_text_side(tx.scoped(r), sources, terms, want_speakers, base, held)
                for r in self.refs
            ]
        if not self.stats.done():  # a retried transaction reads them again
            self.stats.set_result([st for st, _ in read])
        lists: list[RankedList] = []
        for ref, (st, rows) in zip(self.refs, read, strict=True):
            mine: list[RankedList] = []
            for source in sources:
                kind = st.of(source)
                if terms and notes_past and source is pure.Source.NOTES:
                    work = past.fulltext_leg(tx.scoped(ref), terms, kind, pool, base, lv.k1, lv.b)
                    ranked = await self._leg(f"fulltext_{source.value}", work)
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
                        engine=self.svc.search_engine.name,
                    )
                    ranked = await self._leg(f"fulltext_{source.value}", work)
                    mine.append(RankedList("fulltext", source, ref, ranked))
            # What a hit shows of the held legs' notes and chunks, in one statement.
            held_lists = {one.source: one.ranked for one in mine if one.source in rows}
            shown = await legs.held_hits(tx.scoped(ref), held_lists)
            lists += [dc_replace(one, ranked=shown.get(one.source, one.ranked)) for one in mine]
        return lists

    async def vector_side(self, tx: Tx, vector: list[float]) -> list[RankedList]:
        """Every vector leg, per scope and kind, once the statistics are read."""
        lv, pool, base = self.req.levers, self.pool, self.base
        lists: list[RankedList] = []
        for ref, st in zip(self.refs, self.stats.result(), strict=True):
            for source in self.sources:
                rows = st.of(source).rows
                if self.notes_past and source is pure.Source.NOTES:
                    ranked = await self._leg(
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
                    passages=self.svc.settings.recall.passage_max > 0,
                )
                ranked = await self._leg(f"vector_{source.value}", work)
                lists.append(RankedList("vector", source, ref, ranked))
            if self.req.view.known_at is not None and pure.Source.DOCUMENTS in self.sources:
                closed = legs.past_chunks_leg(tx.scoped(ref), vector, pool, base)
                ranked = await self._leg("vector_documents", closed)
                lists.append(RankedList("vector", pure.Source.DOCUMENTS, ref, ranked))
        return lists

    async def finish(
        self, tx: Tx, lists: list[RankedList], question: cues.QuestionCues
    ) -> RecallResult:
        """Fusion and boosts, the entity and session steps, the controls and ``dedup``, then
        the top-k loaded."""
        req, refs, now = self.req, self.refs, self.base["now"]
        if self.spans:
            spans = self.spans
            timing.observe("legs", max(e for _, e in spans) - min(s for s, _ in spans))
        with timing.timed("fusion"):
            ranked, report = _rank(req, refs, lists, question, self.pool, now)
        ranked = _name_text_engine(ranked, self.svc.search_engine.name, self.notes_past)
        prefer = req.window is not None and req.window.missing is pure.Missing.PREFER
        if req.levers.entity_weight > 0:
            ranked, steps = await recall_entities.apply(
                tx, refs, ranked, self._entity_plan(question), _carried(lists)
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
            tx, refs, ranked, req.controls, req.top_k, now
        )
        if req.dedup is not None:
            ranked = await recall_dedup.drop_duplicates(tx, refs, ranked, req.top_k, req.dedup)
        lv = req.levers
        ranked = await recall_newer.apply(
            tx, refs, ranked, lv.newer_first, req.top_k, lv.newer_revision
        )
        with timing.timed("load"):
            hits = await hits_of.load(
                tx,
                refs,
                ranked[: req.top_k],
                self.who,
                req.view.known_at,
                self.base if self.notes_past else None,
                _carried(lists) if req.view.known_at is None else None,
            )
        return RecallResult(
            hits=hits,
            sources_applied=True,
            time_filter=report,
            scopes=[r.scope for r in refs],
            applied_filters=past.applied_filters(
                self.sources, req.window is not None, req.view.known_at
            ),
            controls=controlled,
        )

    async def _leg(self, stage: str, work: Awaitable[T]) -> T:
        """One leg, timed as its stage; its span counts towards the "legs" stage."""
        started = time.perf_counter()
        try:
            return await work
        finally:
            ended = time.perf_counter()
            self.spans.append((started, ended))
            timing.observe(stage, ended - started)

    def _entity_plan(self, question: cues.QuestionCues) -> recall_entities.Plan:
        req, lv, now = self.req, self.req.levers, self.base["now"]
        speakers = {s for st in self.stats.result() for s in st.speakers}
        kinds = [s for s in self.sources if not (self.notes_past and s is pure.Source.NOTES)]

        def boost(new: list[Hit]) -> list[Hit]:
            boosted = fusion.boost(new, question, lv)
            return recall_controls.weigh_recency(boosted, req.controls, now)

        return recall_entities.plan_of(
            self.terms,
            speakers,
            kinds,
            self.pool,
            self.base,
            lv,
            req.rrf_k,
            req.window,
            boost,
            self.svc.search_engine.name,
        )


def _name_text_engine(hits: list[Hit], engine: str, notes_past: bool) -> list[Hit]:
    """Each hit a full-text leg ranked (not one it missed, counted beyond its depth) says
    which engine read that leg (``explain``); a ``knownAt`` read of notes in the past has its
    own Cypher leg (``recall_past``)."""
    named: list[Hit] = []
    for hit in hits:
        if hit.explain is not None and any(
            p.leg == "fulltext" and not p.beyond_depth for p in hit.explain.legs
        ):
            past_notes = notes_past and hit.kind is pure.Source.NOTES
            explain = dc_replace(hit.explain, text_engine="cypher" if past_notes else engine)
            hit = dc_replace(hit, explain=explain)
        named.append(hit)
    return named


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
    ranked = fusion.boost(ranked, question, req.levers)
    ranked = recall_controls.weigh_recency(ranked, req.controls, now)
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
