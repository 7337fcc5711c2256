"""Closure of single-valued facts (docs/spec.md, Reconciliation): pure, no I/O.

Of the facts one subject holds for one single-valued predicate, each is closed where the next
fact with a different object starts. "Next" is by start time (``valid_at``; a fact without
one starts at its ``observed_at``, else at its write time); for equal starts, by the end the
writer stated (a value its writer says ends sooner is the earlier one, and an open one is the
latest), then by observation (the newer observation is kept and the older closed at the same
instant: an empty interval), then by natural key, so that the order is a property of the
facts, never of their arrival. A fact's end only ever moves earlier: an end its writer
gave, or one set by a supersession or retraction, is never moved later. Because every
closure point is the minimum over a set that only grows, loading the same facts in any order
gives the same timeline.

A start written as a date without a time names a period, not an instant (docs/decisions/
0009-dated-starts-name-a-period.md): the server keeps instants, so a start at
midnight UTC on 1 January reads as that year, on the 1st of a month as that month, at any
other midnight as that day (``period_end``); only a stated start does, never one taken from
an observation or a write time. When another value's stated end falls inside that period
(after its first instant, before the fact's own stated end), the two do not close each
other: the stated, bounded one keeps its interval, and the fact holds only from that end
(``held_from``, the latest such end). Both are properties of the set of facts, and a
``held_from`` only ever moves later, so the timeline still does not depend on arrival order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)
_MIDNIGHT = datetime.min.time()


class ClosureReason(StrEnum):
    SINGLE_VALUED = "SINGLE_VALUED"  # the predicate holds one value per subject at a time


@dataclass(frozen=True, slots=True)
class Stated:
    """One stored fact of a (subject, predicate) timeline as the closure sees it."""

    id: str
    object_key: tuple[str, str]  # (type, normalised name)
    start: datetime
    observed_at: datetime | None
    natural_key: str
    end: datetime | None  # the fact's current end (None: open)
    # The end its writer first gave (None: open): unlike ``end``, no closure changes it, so
    # ranking by it does not depend on what arrived before.
    stated_end: datetime | None = None
    # Is ``start`` a ``valid_at`` its writer gave? A start taken from an observation or a
    # write time (a fact stored before its predicate was single-valued, or imported) names
    # no period, however it falls on midnight.
    start_stated: bool = True

    def rank(self) -> tuple[datetime, datetime, datetime, str]:
        stated = self.stated_end or _LATEST
        return (self.start, stated, self.observed_at or _EARLIEST, self.natural_key)


@dataclass(frozen=True, slots=True)
class Closure:
    """``fact_id`` ends at ``invalid_at`` because ``by_id`` starts there."""

    fact_id: str
    by_id: str
    invalid_at: datetime
    reason: ClosureReason = ClosureReason.SINGLE_VALUED
    # Both start at the same instant: the newer observation (``by_id``) was kept.
    same_start: bool = False


def period_end(start: datetime) -> datetime | None:
    """The end of the period a start at midnight UTC names (a year from 1 January, a month
    from the 1st, else a day); None for a start with a time of day."""
    if start.utcoffset() != timedelta(0) or start.timetz().replace(tzinfo=None) != _MIDNIGHT:
        return None
    try:
        if start.month == 1 and start.day == 1:
            return start.replace(year=start.year + 1)
        if start.day == 1:
            return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
        return start + timedelta(days=1)
    except (ValueError, OverflowError):
        return _LATEST  # the last period there is


def _inside(bounded: Stated, dated: Stated) -> bool:
    """Does ``bounded``'s stated end fall inside the period ``dated``'s start names (and
    before ``dated``'s own stated end), for another value? Then neither closes the other."""
    end = bounded.stated_end
    if end is None or not dated.start_stated or bounded.object_key == dated.object_key:
        return False
    until = period_end(dated.start)
    return until is not None and dated.start < end <= until and end < (dated.stated_end or _LATEST)


def _apart(a: Stated, b: Stated) -> bool:
    return _inside(a, b) or _inside(b, a)


def held_from(timeline: Iterable[Stated]) -> dict[str, datetime]:
    """The facts that hold only from later than their start: the latest stated end of another
    value inside the period their start names (``_inside``)."""
    facts = list(timeline)
    out: dict[str, datetime] = {}
    for dated in facts:
        ends = [b.stated_end for b in facts if b.stated_end is not None and _inside(b, dated)]
        if ends:
            out[dated.id] = max(ends)
    return out


def closures(timeline: Iterable[Stated]) -> list[Closure]:
    """The closures that make ``timeline`` hold one value at every instant."""
    ranked = sorted(timeline, key=Stated.rank)
    out: list[Closure] = []
    for i, fact in enumerate(ranked):
        closer = next(
            (g for g in ranked[i + 1 :] if g.object_key != fact.object_key and not _apart(fact, g)),
            None,
        )
        if closer is None:
            continue
        if fact.end is not None and fact.end <= closer.start:
            continue  # it already ends by then (never moved later)
        out.append(Closure(fact.id, closer.id, closer.start, same_start=closer.start == fact.start))
    return out


def apply(timeline: Sequence[Stated], done: Iterable[Closure]) -> list[Stated]:
    """The timeline after ``done`` (new rows; the inputs are not changed)."""
    ends = {c.fact_id: c.invalid_at for c in done}
    return [replace(f, end=ends.get(f.id, f.end)) for f in timeline]
