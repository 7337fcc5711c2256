"""Facts (docs/spec.md, Time): assert idempotently, supersede once, retract, judge, read in time.

Every write is one transaction. A batch writes each fact with its subject, object and the
source chunk's mention edges in the fact's own scope, or nothing at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from palimpsest import paging
from palimpsest.cypher import facts as q
from palimpsest.cypher.driver.executor import Row, ScopedTx, Tx
from palimpsest.domain.names import fold, normalise
from palimpsest.domain.time.timeparse import check_interval
from palimpsest.errors import Conflict, Forbidden, InvalidArgument, NotFound
from palimpsest.identity import Origin, Principal, Scope, ScopeRef, resolve_scope
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.ontology.reconcile import Closure, ClosureReason
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import check_id, fact_stamp
from palimpsest.resolvers.facts import closure, conflicts, dedup, quotes
from palimpsest.resolvers.facts import entity_resolution as entities
from palimpsest.resolvers.facts.closure import OPEN_END, Rules
from palimpsest.resolvers.facts.decode import as_known, fact_from
from palimpsest.resolvers.facts.inputs import MAX_TEXT, prepare
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest.schema.fact_rows import FactRow, fact_params
from palimpsest.schema.models import Fact

MIN_CONFIDENCE = 0.25  # below this a fact is refuted and hidden by default
MAX_LIST_LIMIT = 1000
LIST_NAME = "facts"
HISTORY_NAME = "factHistory"
_POSITION = (paging.Part.TIME_OR_NULL, paging.Part.TIME, paging.Part.ID)
VERDICTS = {"supported": 0.9, "unclear": 0.5, "mistyped": 0.4, "unsupported": 0.0}


@dataclass(frozen=True, slots=True)
class TimeView:
    """Which facts a read sees: valid at ``as_of``, as recorded at ``known_at``."""

    as_of: datetime
    known_at: datetime | None = None
    include_retired: bool = False
    include_refuted: bool = False
    as_of_given: bool = False  # a read "as of now" by default is not a time filter request

    def params(self) -> dict[str, Any]:
        return {
            "as_of": self.as_of,
            "known_at": self.known_at,
            "include_retired": self.include_retired,
            "include_refuted": self.include_refuted,
            "min_confidence": MIN_CONFIDENCE,
            "open_end": OPEN_END,
        }


@dataclass(frozen=True, slots=True)
class Closed:
    """A fact this write closed: it ends at ``invalid_at`` because ``by_id`` starts there."""

    fact: Fact
    invalid_at: datetime
    reason: ClosureReason
    by_id: str
    same_start: bool  # equal starts: the newer observation (``by_id``) was kept


@dataclass(frozen=True, slots=True)
class Asserted:
    fact: Fact
    created: bool
    # The closures this write made that involve this fact (as the closed or the closing one).
    closed: tuple[Closed, ...] = ()
    merged: str | None = None  # a near-duplicate: the id of the fact it became a source of


def time_view(
    svc: Services,
    as_of: datetime | None,
    known_at: datetime | None,
    include_retired: bool = False,
    include_refuted: bool = False,
) -> TimeView:
    return TimeView(
        as_of=as_of or svc.clock(),
        known_at=known_at,
        include_retired=include_retired,
        include_refuted=include_refuted,
        as_of_given=as_of is not None or known_at is not None,
    )


async def resolve_sources(tx: ScopedTx, rows: Sequence[FactRow]) -> list[FactRow]:
    """Quote each source span from the caller's own scope; mention edges only stay in-scope.

    A source is keyed by its origin scope, chunk and span, so the same span asserted twice is
    one source and another span of the same fact is a second one."""
    ids = sorted({r.source_chunk_id for r in rows if r.source_chunk_id})
    if not ids:
        return list(rows)
    found = await tx.run(q.CHUNK_TEXTS, {"ids": ids})
    texts: dict[str, str] = {r["id"]: r["text"] for r in found}
    documents = {r["id"]: r["document_id"] for r in found}
    return [_sourced(row, texts, documents, tx.ref) for row in rows]


def _sourced(
    row: FactRow, texts: dict[str, str], documents: dict[str, Any], origin: ScopeRef
) -> FactRow:
    chunk_id = row.source_chunk_id
    if chunk_id is None or row.source_start is None or row.source_end is None:
        return row
    if chunk_id not in texts:
        raise NotFound(f"facts[{row.index}].source: chunk not found")
    text = texts[chunk_id]
    if row.source_end > len(text):
        raise InvalidArgument(
            f"facts[{row.index}].source: end {row.source_end} is past the chunk's "
            f"{len(text)} characters"
        )
    if row.quote is not None:
        row = quotes.narrow(row, text)
    start, end = row.source_start, row.source_end
    return replace(
        row,
        source_text=text[start:end],
        source_key=f"{origin.scope_key}:{chunk_id}:{start}:{end}",
        source_document_id=documents[chunk_id],
        origin_key=origin.scope_key,
        origin_scope=origin.scope.value,
        mention_chunk_id=chunk_id,
    )


async def write_batch(
    tx: ScopedTx,
    svc: Services,
    stamp: dict[str, Any],
    rows: Sequence[FactRow],
    reader: Principal,
    rules: Rules | None = None,
) -> list[tuple[int, Asserted]]:
    """Write rows into the transaction's scope; a natural key naming another fact conflicts.

    ``stamp`` is the writer's provenance and key (``common.fact_stamp``). With ``rules``,
    single-valued facts close what they replace (``resolvers.closure``) in this transaction.
    Names are first resolved to the entities they mean (``resolvers.entities``)."""
    resolved = await entities.resolve_proving(tx, svc, rows)
    proof = resolved.proof
    locked_at, rows = closure.prepare(rules, resolved.rows, resolved.locked_at)
    now = locked_at or svc.clock()
    floor = svc.settings.model.judge_cosine if svc.settings.model.judges else None
    rows, band = await dedup.merge_and_band(
        tx, rows, svc.settings.recall.dedup_cosine, proof.new_subjects, floor
    )
    # A key no stored fact holds cannot name a different one (a merged row's key may be).
    unproved = [r for r in rows if r.natural_key not in proof.unstored_keys]
    clashes = await tx.run(q.KEY_CONFLICTS, {"facts": fact_params(unproved)}) if unproved else []
    if clashes:
        keys = ", ".join(sorted({c["natural_key"] for c in clashes}))
        raise Conflict(f"natural key already names a different fact: {keys}")
    rows = [replace(row, **term_index.row_fields(row.text)) for row in rows]
    rows = quotes.withhold(rows, tx.ref.scope_key)
    # What the lock proved unstored is what the statement should create: it counts that
    # itself (its term statistics and the counters) when it did, one statement fewer.
    expected = _first_per_key(r for r in rows if r.natural_key in proof.unstored_keys)
    counting = quotas.fact_counting(svc.settings, rows, [r.terms() for r in expected.values()])
    params = {
        **stamp,
        **counting,
        "now": now,
        "facts": fact_params(rows),
        "open_end": OPEN_END,
        "expected": sorted(expected),
    }
    written = await tx.run(q.ASSERT_FACTS, params)
    if written and written[0]["counted"]:
        await quotas.settle_written_facts(tx, svc.settings, rows, written, len(expected))
    else:
        # Only new facts count: a re-assertion matches the stored fact and keeps its text.
        by_index = {r.index: r for r in rows}
        made = sorted(r["index"] for r in written if r["created"])
        fresh = list(_first_per_key(by_index[i] for i in made).values())
        delta = term_index.added([r.terms() for r in fresh])
        await quotas.admit_written_facts(tx, svc.settings, rows, written, len(fresh), delta)
    done = await closure.close(tx, rows, now) if locked_at else []
    facts = {r["index"]: fact_from(tx.ref.scope, r, reader) for r in written}
    if band:
        await conflicts.record(tx, band, {i: f.id for i, f in facts.items()}, now)
    out = (
        await _with_closures(tx, reader, written, facts, done)
        if done
        else [(r["index"], Asserted(facts[r["index"]], bool(r["created"]))) for r in written]
    )
    merged = {r.index for r in rows if r.merged}
    return [(i, replace(a, created=False, merged=a.fact.id) if i in merged else a) for i, a in out]


def _first_per_key(rows: Iterable[FactRow]) -> dict[str, FactRow]:
    """The first row of each natural key: a batch may name one new fact twice, and the
    statement creates it from the first (its text is the one the statistics must count)."""
    first: dict[str, FactRow] = {}
    for row in rows:
        first.setdefault(row.natural_key, row)
    return first


async def _with_closures(
    tx: ScopedTx,
    reader: Principal,
    written: list[Row],
    facts: dict[int, Fact],
    done: list[Closure],
) -> list[tuple[int, Asserted]]:
    """The batch's facts as the closures left them, each with the closures it took part in."""
    ids = sorted({c.fact_id for c in done} | {c.by_id for c in done})
    rows = await tx.run(q.FACTS_BY_ID, {"ids": ids})
    now = {f.id: f for f in (fact_from(tx.ref.scope, r, reader) for r in rows)}
    out: list[tuple[int, Asserted]] = []
    for r in written:
        fact = now.get(facts[r["index"]].id, facts[r["index"]])
        mine = tuple(
            Closed(now[c.fact_id], c.invalid_at, c.reason, c.by_id, c.same_start)
            for c in done
            if fact.id in (c.fact_id, c.by_id)
        )
        out.append((r["index"], Asserted(fact, bool(r["created"]), mine)))
    return out


async def embed_rows(svc: Services, rows: Sequence[FactRow]) -> list[FactRow]:
    vectors = await svc.embed([r.text for r in rows])
    return [replace(row, embedding=v) for row, v in zip(rows, vectors, strict=True)]


async def assert_facts(
    svc: Services, who: Principal, scope: Scope, drafts: Sequence[FactDraft]
) -> list[Asserted]:
    """Assert facts in one scope (no placement); ``placement.py`` drives placed batches."""
    ref = resolve_scope(who, scope)
    rows = await embed_rows(svc, prepare(drafts))

    async def work(tx: Tx) -> list[tuple[int, Asserted]]:
        # The tenant's ontology is read in the write's own transaction (its first statement,
        # which the BEGIN goes out with): no session of its own.
        rules = await closure.read_rules(tx, who)
        scoped = tx.scoped(ref)
        sourced = await resolve_sources(scoped, rows)
        return await write_batch(scoped, svc, fact_stamp(who), sourced, who, rules)

    servers = await svc.db.partition([ref, tenant_config_ref(who)])
    if len(servers) == 1:
        written = await servers[0][0].write_tx(work)
    else:
        # GLOBAL on another tenant shard than the tenant's ontology: one transaction runs on
        # one server, so the rules are read first, in a transaction of their own.
        written = await _write_apart(svc, who, ref, rows)
    return [a for _, a in sorted(written, key=lambda pair: pair[0])]


async def _write_apart(
    svc: Services, who: Principal, ref: ScopeRef, rows: Sequence[FactRow]
) -> list[tuple[int, Asserted]]:
    rules = await closure.load_rules(svc, who)

    async def work(tx: ScopedTx) -> list[tuple[int, Asserted]]:
        sourced = await resolve_sources(tx, rows)
        return await write_batch(tx, svc, fact_stamp(who), sourced, who, rules)

    return await svc.db.scoped(ref).write_tx(work)


async def list_facts(
    svc: Services,
    who: Principal,
    scope: Scope,
    view: TimeView,
    subject: EntityRef | None,
    predicate: str | None,
    limit: int,
    after: str | None = None,
) -> paging.Page[Fact]:
    """Facts in (validAt, createdAt, id) order, undated last, paged."""
    ref = resolve_scope(who, scope)
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, LIST_NAME, _POSITION) or [None, None, None]
    params = {
        "subject_norm": normalise(subject.name) if subject else None,
        "subject_type": normalise(subject.type) if subject and subject.type else None,
        "subject_key": (fold(subject.name) or None) if subject else None,
        "predicate": " ".join(predicate.split()) if predicate else None,
        "limit": limit + 1,
        "after_valid_at": position[0],
        "after_created_at": position[1],
        "after_id": position[2],
        **view.params(),
    }
    # A subject is named as a write names it: an alias or merged-away spelling included.
    statement = q.LIST_SUBJECT_FACTS if subject else q.LIST_FACTS
    rows = await svc.db.scoped(ref).read(statement, params)
    found = [as_known(fact_from(scope, r, who), r, view.known_at) for r in rows]
    return paging.page(found, limit, LIST_NAME, lambda f: [f.valid_at, f.created_at, f.id])


async def find_fact(svc: Services, who: Principal, scope: Scope, fact_id: str) -> Fact | None:
    """The fact, or None when the scope holds no such id (another scope's reads the same)."""
    ref = resolve_scope(who, scope)
    rows = await svc.db.scoped(ref).read(q.GET_FACT, {"id": check_id(fact_id, "id")})
    return fact_from(scope, rows[0], who) if rows else None


async def get_fact(svc: Services, who: Principal, scope: Scope, fact_id: str) -> Fact:
    """The fact a write just touched; NOT_FOUND when it is not (or no longer) there."""
    found = await find_fact(svc, who, scope, fact_id)
    if found is None:
        raise NotFound("fact not found")
    return found


async def history(
    svc: Services, who: Principal, scope: Scope, fact_id: str, limit: int, after: str | None
) -> paging.Page[Fact] | None:
    """The supersession chain the fact belongs to, oldest first, paged; None for a missing id.

    The chain is read whole (it only grows at its newest end) and paged by the position of
    the cursor's fact in it."""
    ref = resolve_scope(who, scope)
    params = {"id": check_id(fact_id, "id")}
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, HISTORY_NAME, (paging.Part.ID,))
    rows = await svc.db.scoped(ref).read(q.FACT_HISTORY, params)
    if not rows:
        return None
    chain = {f.id: f for f in (fact_from(scope, r, who) for r in rows)}
    # Order by the links, not by time: facts asserted in one batch share created_at.
    ordered = [f for f in chain.values() if f.supersedes not in chain]
    while ordered[-1].superseded_by in chain and len(ordered) < len(chain):
        ordered.append(chain[ordered[-1].superseded_by])
    start = 0
    if position is not None:
        ids = [f.id for f in ordered]
        if position[0] not in ids:
            raise InvalidArgument("after: the cursor is not from this fact's history")
        start = ids.index(position[0]) + 1
    return paging.page(ordered[start : start + limit + 1], limit, HISTORY_NAME, lambda f: [f.id])


async def supersede(
    svc: Services, who: Principal, scope: Scope, old_id: str, new_id_: str
) -> tuple[Fact, Fact, bool]:
    """Retire ``old_id`` in favour of ``new_id_``; returns (old, new, already)."""
    ref = resolve_scope(who, scope)
    check_id(old_id, "id")
    check_id(new_id_, "byId")
    if old_id == new_id_:
        raise InvalidArgument("a fact cannot supersede itself")
    now = svc.clock()
    params = {"old_id": old_id, "new_id": new_id_, "now": now, "open_end": OPEN_END}

    async def work(tx: ScopedTx) -> bool:
        rows = await tx.run(q.LOCK_PAIR, params)
        if not rows:
            raise NotFound("fact not found")
        row = rows[0]
        if row["a_superseded_by"] == new_id_:
            return True
        if row["a_superseded_by"] is not None:
            raise Conflict(
                f"fact {old_id} is already superseded by {row['a_superseded_by']}; "
                "supersede that newer fact instead",
                superseded_by=row["a_superseded_by"],
            )
        if row["b_supersedes"] is not None:
            raise Conflict(f"fact {new_id_} already supersedes {row['b_supersedes']}")
        if row["b_expired_at"] is not None:
            raise Conflict(f"fact {new_id_} is itself retired and cannot replace another")
        # The old fact stops being true when the new one starts (or now); a replacement
        # that starts earlier means the old fact was never true: an empty interval.
        end = row["b_valid_at"] or now
        start = row["a_valid_at"]
        await tx.run(q.SUPERSEDE, {**params, "invalid_at": max(end, start) if start else end})
        return False

    already = await svc.db.scoped(ref).write_tx(work)
    old = await get_fact(svc, who, scope, old_id)
    new = await get_fact(svc, who, scope, new_id_)
    return old, new, already


async def retract(
    svc: Services, who: Principal, scope: Scope, fact_id: str, invalid_at: datetime | None
) -> Fact:
    """Say a fact stopped being true (at ``invalid_at``, default now) without a replacement."""
    ref = resolve_scope(who, scope)
    check_id(fact_id, "id")
    now = svc.clock()
    end = invalid_at or now

    async def work(tx: ScopedTx) -> None:
        rows = await tx.run(q.LOCK_FACT, {"id": fact_id, "now": now})
        if not rows:
            raise NotFound("fact not found")
        row = rows[0]
        if row["expired_at"] is not None:
            raise Conflict("the fact is retired (superseded); read its history instead")
        if row["invalid_changed_at"] is not None:
            raise Conflict("the fact's end was already set after it was recorded")
        check_interval(row["valid_at"], end)
        params = {"id": fact_id, "now": now, "invalid_at": end, "open_end": OPEN_END}
        await tx.run(q.RETRACT, params)

    await svc.db.scoped(ref).write_tx(work)
    return await get_fact(svc, who, scope, fact_id)


async def judge(
    svc: Services, who: Principal, scope: Scope, fact_id: str, verdict: str, reason: str
) -> Fact:
    ref = resolve_scope(who, scope)
    check_id(fact_id, "id")
    if verdict not in VERDICTS:
        raise InvalidArgument(f"verdict must be one of {', '.join(VERDICTS)}")
    if not reason.strip() or len(reason) > MAX_TEXT:
        raise InvalidArgument(f"reason is required (1-{MAX_TEXT} characters)")
    current = await get_fact(svc, who, scope, fact_id)
    if current.provenance.source_quote is None:
        # Nothing to check the claim against: only an operator may vouch for it.
        if who.origin is not Origin.OPERATOR:
            raise Forbidden("this fact has no source span; only an operator may judge it")
        if verdict == "mistyped":
            raise InvalidArgument("a fact without a source span cannot be judged mistyped")
    params = {
        "id": fact_id,
        "verdict": verdict,
        "confidence": VERDICTS[verdict],
        "reason": reason,
        "judged_by": who.agent_name or who.origin.value,
        "now": svc.clock(),
    }
    if not await svc.db.scoped(ref).write(q.JUDGE, params):
        raise NotFound("fact not found")
    return await get_fact(svc, who, scope, fact_id)
