"""What a recall answers, and how a candidate becomes an answer.

A candidate is built from its leg's ``Cues`` alone (enough for the time window, the
time-filter report and the boosts); only the top-k that survives fusion is loaded, one
statement per scope (``recall_legs.load_hits``), and filled in here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from palimpsest.cypher.driver.executor import Row, Tx
from palimpsest.domain.ranking import fusion as pure
from palimpsest.domain.time import timerefs
from palimpsest.identity import Principal, Scope, ScopeRef
from palimpsest.resolvers.common import provenance_from
from palimpsest.resolvers.facts.decode import fact_from
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.recall import past as recall_past
from palimpsest.schema.models import Fact, Provenance

Ident = tuple[str, str, str]  # (kind, scope, id)


@dataclass(frozen=True, slots=True)
class LegPart:
    """One ranked list's share of a hit's score: ``weight / (k + rank)``. A list that did not
    return the row counts it ranked just past its pool (``beyond_depth``, no value)."""

    leg: str  # vector | fulltext
    rank: int
    contribution: float
    value: float | None  # the leg's own score: cosine, or scope-local BM25
    beyond_depth: bool = False
    weight: float = 1.0  # the leg's weight in the fusion (``weights``, else the settings)
    # The passage of a long chunk that gave the vector leg its value, when not the head.
    passage: legs.Passage | None = None


@dataclass(frozen=True, slots=True)
class BoostPart:
    lever: str  # observedDate | whenQuestion | yearRange | timeRange | whenSpecific | speaker
    # | recency
    factor: float


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A hit ``dedup`` dropped because it is as close as the threshold to this one."""

    kind: pure.Source
    scope: Scope
    id: str
    cosine: float
    score: float  # its own score, before it was dropped


@dataclass(frozen=True, slots=True)
class NewerThan:
    """The hit the newer-first lever placed this one above: told earlier, of the same matter."""

    kind: pure.Source
    scope: Scope
    id: str
    cosine: float


@dataclass(frozen=True, slots=True)
class Explain:
    legs: list[LegPart]
    boosts: list[BoostPart]
    fused: float  # the RRF sum before boosts
    duplicates: list[Duplicate] = field(default_factory=list)  # dropped by ``dedup``
    floor: str | None = None  # ``minScore`` kept it by: cosine | fulltext (None: no floor)
    document_place: int | None = None  # its place among its document's hits (maxPerDocument)
    # The time ranges resolved from the row's text at ingest, when a time boost read them.
    time_ranges: tuple[timerefs.Range, ...] = ()
    form: str | None = None  # the question's form (recall_forms), whose weights were used
    # Which engine read the row's full-text leg (cypher/extension.py): procedure or cypher;
    # None when no full-text leg ranked it.
    text_engine: str | None = None
    newer_than: NewerThan | None = None  # the hit it was placed above (recall/newer.py)


@dataclass(frozen=True, slots=True)
class Hit:
    """One answer of a recall. Frozen: each ranking step (fusion, a boost, a prior, the load)
    answers new hits (``dataclasses.replace``), so no step changes a hit another holds."""

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
    time_ranges: tuple[timerefs.Range, ...] = ()  # resolved at ingest (chunks)


@dataclass(frozen=True, slots=True)
class TimeFilterReport:
    mode: str
    slack_seconds: int
    in_window: int
    out_of_window: int
    undated: int


def candidate(kind: pure.Source, scope: Scope, row_id: str, cues: legs.Cues) -> Hit:
    """A hit before its load: no text or provenance yet, only what ranking reads. Legs
    re-check the scope, so the scope asked for is the one the row is stored in."""
    return Hit(
        kind,
        scope,
        row_id,
        "",
        key=row_id if kind is pure.Source.NOTES else None,
        observed_at=cues.observed_at,
        years=cues.years,
        has_time=cues.has_time,
        speaker=cues.speaker,
        dated=cues.dated,
        time_ranges=cues.ranges,
    )


async def load(
    tx: Tx,
    refs: Sequence[ScopeRef],
    hits: Sequence[Hit],
    reader: Principal,
    known_at: datetime | None = None,
    notes_known: dict[str, Any] | None = None,
    carried: Mapping[Ident, Row] | None = None,
) -> list[Hit]:
    """Fill in the hits fusion kept, one statement per scope; a row deleted since its leg
    read it is left out. ``notes_known``: the recall's parameters when notes are read as
    known at a past time (their text is then the version's, ``recall_past.load_notes``).
    ``carried``: rows a leg already read, as the load would (``Ranked.rows``): those hits are
    filled from them, and a scope whose hits all were runs no statement."""
    out: dict[int, Hit] = {}  # id() of a hit asked for -> the hit filled in
    for ref in refs:
        mine = []
        for h in [h for h in hits if h.scope == ref.scope]:
            row = (carried or {}).get((h.kind.value, h.scope.value, h.id))
            if row is None:
                mine.append(h)
            else:
                out[id(h)] = _filled(h, row, reader)
        if not mine:
            continue
        wanted: dict[pure.Source, list[str]] = {}
        for h in mine:
            wanted.setdefault(h.kind, []).append(h.id)
        if notes_known is not None:
            keys = wanted.pop(pure.Source.NOTES, [])
        rows = await legs.load_hits(tx.scoped(ref), wanted, known_at)
        if notes_known is not None and keys:
            rows[pure.Source.NOTES] = await recall_past.load_notes(
                tx.scoped(ref), keys, notes_known
            )
        by_id = {(kind, _row_id(kind, row)): row for kind, found in rows.items() for row in found}
        for h in mine:
            row = by_id.get((h.kind, h.id))
            if row is not None:
                out[id(h)] = _filled(h, row, reader)
    return [out[id(h)] for h in hits if id(h) in out]


def _row_id(kind: pure.Source, row: Row) -> str:
    if kind is pure.Source.FACTS:
        return str(row["fact"]["id"])
    return str(row["key"] if kind is pure.Source.NOTES else row["id"])


def _filled(hit: Hit, row: Row, reader: Principal) -> Hit:
    """The hit with what its loaded row shows."""
    if hit.kind is pure.Source.FACTS:
        fact = fact_from(Scope(row["fact"]["scope"]), row, reader)
        return replace(
            hit,
            fact=fact,
            text=fact.text,
            scope=fact.scope,
            created_at=fact.created_at,
            provenance=fact.provenance,
        )
    shown = replace(
        hit,
        scope=Scope(row["scope"]),
        created_at=row["created_at"],
        provenance=provenance_from(row, reader),
    )
    if hit.kind is pure.Source.NOTES:
        return replace(shown, text=row["text"] or "", key=row["key"])
    return replace(shown, text=row["text"], document_id=row["document_id"], chunk_type=row["type"])


def apply_window(window: pure.Window, found: dict[Ident, Hit]) -> TimeFilterReport:
    """Each candidate of ``found`` placed in or out of the window (``found`` holds the placed
    hits; a window that requires drops those outside)."""
    counts = {True: 0, False: 0, None: 0}
    for ident, hit in list(found.items()):
        placed = replace(hit, in_window=window.contains(hit.observed_at))
        counts[placed.in_window] += 1
        if window.missing is pure.Missing.REQUIRE and not placed.in_window:
            del found[ident]
        else:
            found[ident] = placed
    return TimeFilterReport(
        mode=window.missing.value,
        slack_seconds=int(window.slack.total_seconds()),
        in_window=counts[True],
        out_of_window=counts[False],
        undated=counts[None],
    )


def as_of_report(found: dict[Ident, Hit], dropped: set[Ident]) -> TimeFilterReport:
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
