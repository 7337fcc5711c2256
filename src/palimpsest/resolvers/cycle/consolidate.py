"""Turn leased spans into durable memory, one user scope at a time (docs/spec.md, Harvest and
consolidation).

A leased batch becomes, in one transaction: a ``turn`` chunk per span in its session's
conversation document (chunk id = span id), the extractors' mention edges and placed facts,
and the spans' acknowledgement. The transaction first re-checks, under the spans' locks, that
this worker still holds them; a span another worker finished is skipped. So a span is written
once, whatever crashes or expired leases happen around it.

A batch that fails is retried span by span, so one bad span cannot hold back the others; each
failure is recorded on its span, which is retried after a back-off and becomes a dead letter
after ``max_attempts`` leases.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from palimpsest.cypher import context as cq
from palimpsest.cypher import conversations as q
from palimpsest.cypher import quotas as qq
from palimpsest.cypher.driver.executor import Row, Tx
from palimpsest.embedding import Vector
from palimpsest.errors import PalimpsestError
from palimpsest.identity import Origin, Scope, ScopeRef, resolve_scope
from palimpsest.identity.acting import HarvestedRun, act_for_user
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.ontology import Ontology
from palimpsest.ontology.extractors import (
    Extraction,
    Extractor,
    KnownEntity,
    KnownFact,
    Mention,
    Turn,
)
from palimpsest.resolvers.cycle import judging, queue, turn_rows
from palimpsest.resolvers.cycle.tokens import TokenDay
from palimpsest.resolvers.documents import passages
from palimpsest.resolvers.facts import closure
from palimpsest.resolvers.facts.inputs import VALUE_TYPE
from palimpsest.resolvers.facts.ledger import TimeView
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import ontology, quotas
from palimpsest.schema.drafts import FactDraft
from palimpsest.schema.pairs import Judge
from palimpsest.schema.turns import RunStamp

log = logging.getLogger(__name__)
# Batches one call consolidates before the worker looks at other scopes again.
PIPELINE_BATCHES = 8
# Word runs past which an extractor's lookup reads the scope's entities (when it holds at
# most this many) and matches them here, instead of sending the runs (``_EntityView``).
SCAN_ENTITIES = 2000


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    owner: str  # the lease owner: unique per worker
    extractors: Sequence[Extractor]
    batch_size: int = 32
    lease_seconds: float = 60.0
    max_attempts: int = 5
    backoff_seconds: float = 30.0
    # Asks about the pairs of close facts the scope's writes recorded (None: judging off).
    judge: Judge | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    leased: int = 0
    consolidated: int = 0
    failed: int = 0
    dead: int = 0
    takeovers: int = 0
    closed: int = 0  # facts closed by single-valued facts written (docs/spec.md, 3b)
    # What the extractors counted (``Extraction.counts``), once per batch: model facts kept
    # and dropped, spans whose extraction failed, tokens in and out (docs/extraction.md).
    extraction: tuple[tuple[str, int], ...] = ()

    def __add__(self, o: Outcome) -> Outcome:
        counts = Counter(dict(self.extraction))
        counts.update(dict(o.extraction))
        return Outcome(
            self.leased + o.leased,
            self.consolidated + o.consolidated,
            self.failed + o.failed,
            self.dead + o.dead,
            self.takeovers + o.takeovers,
            self.closed + o.closed,
            tuple(sorted(counts.items())),
        )

    def counted(self, name: str) -> int:
        """One of the extractors' counts (``extraction_failed``, ``tokens_in``, ...)."""
        return dict(self.extraction).get(name, 0)


class LeaseLost(Exception):
    """Some spans of the batch were finished or taken by another worker meanwhile."""

    def __init__(self, held: set[str]) -> None:
        super().__init__("lease lost")
        self.held = held


class _EntityView(TokenDay):
    """What an extractor may read: the scope's entities, by normalised name or alias; and
    (``BandingView``) the tenant's ontology and the current facts about named entities; and
    (``TokenLedger``, ``TokenDay``) the tenant's model tokens spent today."""

    def __init__(self, svc: Services, ref: ScopeRef) -> None:
        super().__init__(svc, tenant_config_ref(act_for_user(ref.tenant_id, ref.owner_id)))
        self.ref = ref

    async def entities_named(self, names: Collection[str]) -> list[KnownEntity]:
        db = self.svc.db.scoped(self.ref)
        if len(names) > SCAN_ENTITIES:
            # A batch of long turns has hundreds of thousands of word runs, and the scope
            # most often far fewer entities: read those and match here, rather than send
            # every run to the database (both read every entity of the scope).
            params = {"value_type": VALUE_TYPE, "limit": SCAN_ENTITIES + 1}
            rows = await db.read(q.SCOPE_ENTITY_NAMES, params)
            if len(rows) <= SCAN_ENTITIES:
                return _named_among(rows, names)
        params = {"names": sorted(names), "value_type": VALUE_TYPE}
        rows = await db.read(q.ENTITIES_NAMED, params)
        return [KnownEntity(r["type"], r["name"], r["norm"], tuple(r["aliases"])) for r in rows]

    async def ontology(self) -> Ontology | None:
        who = act_for_user(self.ref.tenant_id, self.ref.owner_id)
        return (await closure.load_rules(self.svc, who)).ontology

    async def facts_about(self, names: Collection[str], limit: int) -> list[KnownFact]:
        view = TimeView(as_of=self.svc.clock())
        params = {**view.params(), "names": sorted(names), "value_type": VALUE_TYPE}
        rows = await self.svc.db.scoped(self.ref).read(cq.ENTITY_FACTS, {**params, "limit": limit})
        return [
            KnownFact(
                r["subject"]["type"],
                r["subject"]["name"],
                r["fact"]["predicate"],
                r["object"]["type"],
                r["object"]["name"],
                r["fact"]["valid_at"],
            )
            for r in rows
        ]


def _named_among(rows: Sequence[Row], names: Collection[str]) -> list[KnownEntity]:
    """``ENTITIES_NAMED``'s answer from the scope's entities: one per entity whose normalised
    name is among ``names`` (without aliases), one per entity an alias of which is (with)."""
    wanted = names if isinstance(names, set | frozenset) else set(names)
    out: list[KnownEntity] = []
    for r in rows:
        if r["norm"] in wanted:
            out.append(KnownEntity(r["type"], r["name"], r["norm"]))
        aliases = tuple(r["aliases"])
        if aliases and not wanted.isdisjoint(aliases):
            out.append(KnownEntity(r["type"], r["name"], r["norm"], aliases))
    return out


async def consolidate_scope(
    svc: Services,
    cfg: WorkerConfig,
    tenant_id: str,
    user_id: str,
    scope_key: str,
    max_batches: int = PIPELINE_BATCHES,
    stopping: Callable[[], bool] = lambda: False,
) -> Outcome:
    """Consolidate up to ``max_batches`` leased batches of the user's spans (no more lease
    once ``stopping()``: a server shutting down finishes what it holds and takes no more).

    Pipelined: the next batch is leased and embedded (CPU) while the current one is written
    (database), so a worker spends its time embedding, not waiting; after a batch short of
    the lease limit there is no next one to lease (the visit ends). Extraction reads the
    scope only after the previous batch committed, so it sees what that batch created.
    """
    ref = resolve_scope(act_for_user(tenant_id, user_id), Scope.USER)
    if ref.scope_key != scope_key:
        log.error("queue row names a scope its owner does not resolve to; skipped")
        return Outcome()
    total = Outcome()
    batch: _Batch | None = await _lease_and_embed(svc, cfg, ref)
    rounds = 0
    while batch is not None:
        total += Outcome(dead=len(batch.lease.dead))
        if not batch.spans:
            break
        rounds += 1
        # A batch short of the lease limit drained the scope when it was leased: a span
        # banked since is the next visit's (a harvest on this server wakes the worker).
        drained = len(batch.spans) + len(batch.lease.dead) < cfg.batch_size
        upcoming = (
            asyncio.create_task(_lease_and_embed(svc, cfg, ref))
            if rounds < max_batches and not drained and not stopping()
            else None
        )
        try:
            total += await _settle(svc, cfg, ref, batch)
        except BaseException as e:
            await _abandon(svc, ref, cfg.owner, upcoming)
            if isinstance(e, asyncio.CancelledError):
                # Stopped mid-write (its transaction rolled back): hand the batch back now
                # rather than leave it to its lease's expiry. Spans already acked stay done.
                await queue.release(svc, ref, cfg.owner, [s.id for s in batch.spans])
            raise
        batch = await upcoming if upcoming else None
    if cfg.judge is not None and rounds and not stopping():
        total += await _judged(svc, cfg.judge, ref)
    return total


async def _judged(svc: Services, judge: Judge, ref: ScopeRef) -> Outcome:
    """The scope's pending pairs judged, after its batches are written (no lease held, no
    lock): a failure here costs verdicts, never a span, and is only counted."""
    view = _EntityView(svc, ref)
    try:
        counts = await judging.judge_scope(svc, judge, ref, judge.pairs_per_call, view)
    except Exception as e:
        # Never the message: it may quote parameters. The pairs stay pending.
        log.warning("judging fact pairs failed (%s)", type(e).__name__)
        counts = Counter(judge_failed=1)
    return Outcome(extraction=tuple(sorted(counts.items())))


@dataclass(frozen=True, slots=True)
class _Batch:
    lease: queue.Lease
    turns: list[Turn]
    vectors: list[Vector]
    long: passages.Embedded  # the passages of long turns (resolvers/documents/passages.py)
    # What the early extractors drew while the batch was embedded (None: they raised, or
    # there are none; the batch's settle then runs them with the others).
    early: Extraction | None = None

    @property
    def spans(self) -> list[queue.LeasedSpan]:
        return self.lease.spans


async def _lease_and_embed(svc: Services, cfg: WorkerConfig, ref: ScopeRef) -> _Batch:
    lease = await queue.lease(
        svc, ref, cfg.owner, cfg.batch_size, cfg.lease_seconds, cfg.max_attempts
    )
    turns = [turn_rows.turn(s) for s in lease.spans]
    early = [e for e in cfg.extractors if getattr(e, "early", False)]
    drawing = (
        asyncio.create_task(_drawn_early(early, turns, _EntityView(svc, ref)))
        if early and turns
        else None
    )
    try:
        vectors = await svc.embed([t.text for t in turns]) if turns else []
        long = await passages.embed(svc, [t.text for t in turns])
    except BaseException:
        if drawing is not None:
            drawing.cancel()
        raise
    return _Batch(lease, turns, vectors, long, await drawing if drawing else None)


async def _drawn_early(
    extractors: Sequence[Extractor], turns: Sequence[Turn], view: _EntityView
) -> Extraction | None:
    """An early extractor (a model call) runs while the batch is embedded and the batch
    before it is written, so its latency overlaps the pipeline's instead of adding to it. It
    sees the scope as it was before that batch's write. If it raises, settle runs it again."""
    try:
        return await _extract(extractors, turns, view)
    except Exception as e:
        log.info("early extraction failed (%s); settling runs it again", type(e).__name__)
        return None


async def _abandon(
    svc: Services, ref: ScopeRef, owner: str, upcoming: asyncio.Task[_Batch] | None
) -> None:
    """Hand back a prefetched batch the worker will not write (its lease would only expire)."""
    if upcoming is None:
        return
    try:
        batch = await upcoming
    except Exception:
        return
    if batch.spans:
        await queue.release(svc, ref, owner, [s.id for s in batch.spans])


async def _settle(svc: Services, cfg: WorkerConfig, ref: ScopeRef, batch: _Batch) -> Outcome:
    """Write a batch; if it fails, write its spans one by one and record each failure."""
    spans = batch.spans
    takeovers = sum(1 for s in spans if s.takeovers and s.attempts > 1)
    failures: list[tuple[str, str]] = []
    done = closed = 0
    # Extracted once for the batch (a model call is slow and costs tokens), before the
    # write's transaction: no extractor holds the scope's lock.
    found = _Extracted(cfg.extractors, batch.turns, _EntityView(svc, ref), batch.early)
    try:
        done, closed = await _write(
            svc, cfg, ref, spans, batch.turns, batch.vectors, found, long=batch.long
        )
    except (PalimpsestError, LeaseLost) as e:
        log.info("batch failed (%s); retrying span by span", type(e).__name__)
        for span, turn, vector in zip(spans, batch.turns, batch.vectors, strict=True):
            try:
                one, shut = await _write(
                    svc, cfg, ref, [span], [turn], [vector], found, long=batch.long
                )
                done, closed = done + one, closed + shut
            except LeaseLost:
                continue
            except PalimpsestError as err:
                if not found.drawn_for(span.id):
                    failures.append((span.id, _describe(err)))
                    continue
                # A fact drawn from free text must not cost the span: it is written without.
                try:
                    one, shut = await _write(
                        svc, cfg, ref, [span], [turn], [vector], found, False, batch.long
                    )
                    done, closed = done + one, closed + shut
                    found.counts["extraction_failed"] += 1
                    log.warning("a span's drawn facts were refused (%s); written without", err.code)
                except LeaseLost:
                    continue
                except PalimpsestError as again:
                    failures.append((span.id, _describe(again)))
    dead = 0
    if failures:
        recorded = await queue.fail(
            svc, ref, cfg.owner, failures, cfg.max_attempts, cfg.backoff_seconds
        )
        dead = sum(1 for _, exhausted in recorded if exhausted)
    counts = tuple(sorted(found.counts.items()))
    return Outcome(len(spans), done, len(failures), dead, takeovers, closed, counts)


class _Extracted:
    """The extractors' findings for a batch, drawn once and handed out per write.

    A write of some of the batch's spans gets only what was drawn from those; ``drawn=False``
    leaves out the facts drawn from free text (``FactDraft.extracted_by``). When the batch's
    extraction raised, each later write extracts its own spans again, so one span an
    extractor refuses fails alone."""

    def __init__(
        self,
        extractors: Sequence[Extractor],
        turns: Sequence[Turn],
        view: _EntityView,
        early: Extraction | None = None,
    ):
        self.view, self.turns = view, turns
        self.early = early
        if early is not None:
            # Drawn already: only the other extractors run at settle time.
            extractors = [e for e in extractors if not getattr(e, "early", False)]
            self.counts: Counter[str] = Counter(early.counts)
        else:
            self.counts = Counter()
        self.extractors = extractors
        self._found: Extraction | None = None
        self._raised = False

    async def of(self, turns: Sequence[Turn], drawn: bool = True) -> Extraction:
        found = self._found
        if found is None:
            whole = not self._raised
            try:
                found = await _extract(self.extractors, self.turns if whole else turns, self.view)
            except BaseException:
                self._raised = True
                raise
            self.counts.update(found.counts)
            if self.early is not None:
                found = _joined(found, self.early)
            if whole:
                self._found = found
        ids = {t.id for t in turns}
        return Extraction(
            [m for m in found.mentions if m.turn_id in ids],
            [(i, f) for i, f in found.facts if i in ids and (drawn or f.extracted_by is None)],
        )

    def drawn_for(self, span_id: str) -> bool:
        """Whether facts drawn from free text were found for ``span_id``."""
        found = self._found.facts if self._found else []
        return any(i == span_id and f.extracted_by is not None for i, f in found)


async def _write(
    svc: Services,
    cfg: WorkerConfig,
    ref: ScopeRef,
    spans: Sequence[queue.LeasedSpan],
    turns: Sequence[Turn],
    vectors: Sequence[Vector],
    found: _Extracted | None = None,
    drawn: bool = True,
    long: passages.Embedded | None = None,
) -> tuple[int, int]:
    """Extract (unless ``found`` holds the batch's extraction), then write the turns,
    extractions and acknowledgement in one transaction.

    Returns the spans consolidated and the facts their facts closed."""
    found = found or _Extracted(cfg.extractors, turns, _EntityView(svc, ref))
    extraction = await found.of(turns, drawn)
    plans = await _plan_facts(svc, ref, spans, extraction.facts)
    by_id = {s.id: s for s in spans}
    now = svc.clock()

    async def work(tx: Tx) -> tuple[int, int]:
        user = tx.scoped(ref)
        still = await queue.held(user, list(by_id), cfg.owner)
        if still != set(by_id):
            raise LeaseLost(still)
        documents: dict[str, str] = {}
        for session, group in turn_rows.sessions(spans).items():
            doc = await turn_rows.write_turns(
                user, svc.settings, session, group, turns, vectors, now, svc.offload
            )
            documents.update({s.id: doc for s in group})
        # A long turn's passages (embedded with the batch; else here, in the transaction).
        await passages.write(user, svc, [(t.id, t.text) for t in turns], long)
        mentions = [
            turn_rows.mention_row(m, by_id[m.turn_id]).params() for m in extraction.mentions
        ]
        if mentions:
            await user.run(q.WRITE_MENTIONS, {"mentions": mentions, "now": now})
            # The entities they created count like any writer's (a refusal fails the batch).
            ids = sorted({str(m["entity_id"]) for m in mentions})
            [made] = await user.run(qq.CREATED_ENTITIES, {"ids": ids, "now": now})
            await quotas.admit(user, svc.settings, {quotas.Plane.ENTITIES: int(made["created"])})
        closed: set[tuple[str, str]] = set()
        for plan in plans:
            for _, asserted in await ontology.write_placed(tx, svc, plan):
                closed |= {(c.fact.id, c.by_id) for c in asserted.closed}
        return len(await queue.ack(user, cfg.owner, documents, now)), len(closed)

    try:
        return await svc.db.write_tx(work)
    except LeaseLost as lost:
        if lost.held and len(lost.held) < len(spans):
            kept = [i for i, s in enumerate(spans) if s.id in lost.held]
            return await _write(
                svc,
                cfg,
                ref,
                [spans[i] for i in kept],
                [turns[i] for i in kept],
                [vectors[i] for i in kept],
                found,
                drawn,
                long,
            )
        raise


def _joined(late: Extraction, early: Extraction) -> Extraction:
    """The settle-time extractors' findings, then the early ones' (mentions stay first)."""
    return Extraction(late.mentions + early.mentions, late.facts + early.facts, late.counts)


async def _extract(
    extractors: Sequence[Extractor], turns: Sequence[Turn], view: _EntityView
) -> Extraction:
    mentions: list[Mention] = []
    drafts: list[tuple[str, FactDraft]] = []
    counts: Counter[str] = Counter()
    for extractor in extractors:
        found = await extractor.extract(turns, view)
        known = {t.id for t in turns}
        # An extractor may only speak about the turns it was given.
        mentions += [m for m in found.mentions if m.turn_id in known]
        drafts += [(i, f) for i, f in found.facts if i in known]
        counts.update(found.counts)
    return Extraction(mentions, drafts, dict(counts))


async def _plan_facts(
    svc: Services,
    ref: ScopeRef,
    spans: Sequence[queue.LeasedSpan],
    facts: Sequence[tuple[str, FactDraft]],
) -> list[ontology.PlacedPlan]:
    """Facts placed as their harvesting run would place them with ``assertFacts``."""
    by_id = {s.id: s for s in spans}
    groups: dict[tuple[HarvestedRun, int | None, bool], list[FactDraft]] = {}
    for span_id, draft in facts:
        span = by_id[span_id]
        drawn = draft.extracted_by is not None
        groups.setdefault((span.run, span.compaction_generation, drawn), []).append(draft)
    plans = []
    for (run, generation, drawn), drafts in groups.items():
        who = act_for_user(ref.tenant_id, ref.owner_id, run)
        stamp = RunStamp.of(run, generation)
        if drawn:
            # Drawn by the server's own extractor, not stated by the runtime.
            stamp = replace(stamp, origin=Origin.CONSOLIDATOR.value)
        plans.append(await ontology.plan_placed(svc, who, Scope.USER, drafts, True, stamp))
    return plans


def _describe(error: Exception) -> str:
    """What a dead letter says: the error's class and, for our own errors, the message."""
    if isinstance(error, PalimpsestError):
        return f"{error.code.value}: {error.message}"
    return f"{type(error).__name__}: {getattr(error, 'code', '') or 'database error'}"
