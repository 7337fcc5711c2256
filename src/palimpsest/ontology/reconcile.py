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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum

_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)


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


def closures(timeline: Iterable[Stated]) -> list[Closure]:
    """The closures that make ``timeline`` hold one value at every instant."""
    ranked = sorted(timeline, key=Stated.rank)
    out: list[Closure] = []
    for i, fact in enumerate(ranked):
        closer = next((g for g in ranked[i + 1 :] if g.object_key != fact.object_key), None)
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
