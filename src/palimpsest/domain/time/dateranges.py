"""Half-open ranges of days and their arithmetic, for the time expressions of
``timerefs`` and the ranges recall compares (``cues``, ``resolvers/recall_time``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta

EPOCH = date(1970, 1, 1)
YEAR_DAYS = 365


@dataclass(frozen=True, slots=True, order=True)
class Range:
    """Days ``[start, end)``."""

    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days

    def overlaps(self, other: Range) -> bool:
        return self.start < other.end and other.start < self.end


def epoch_day(d: date) -> int:
    return (d - EPOCH).days


def from_epoch_day(n: int) -> date:
    return EPOCH + timedelta(days=n)


def specificity(days: int) -> float:
    """1 for a day, 0 for a year or longer, log-linear between (a week 0.67, a month 0.42)."""
    if days <= 1:
        return 1.0
    return max(0.0, 1.0 - math.log(days) / math.log(YEAR_DAYS))


def span_overlap(question: Range, row: Range) -> float:
    """How well ``row`` answers ``question``: the share of the question's days it covers
    times the square root of the share of its own days inside the question's. 1 for the same
    span; a row span holding the question's (1995-2001 for 1998: 0.38) beats one that only
    touches it (1990-1998: 0.11); 0 when they do not overlap."""
    shared = (min(question.end, row.end) - max(question.start, row.start)).days
    if shared <= 0:
        return 0.0
    return shared / question.days * math.sqrt(shared / row.days)


def day(d: date) -> Range:
    return Range(d, d + timedelta(days=1))


def month(year: int, month: int) -> Range | None:
    if not 1 <= year <= 9998 or not 1 <= month <= 12:
        return None
    end = date(year + (month == 12), month % 12 + 1, 1)
    return Range(date(year, month, 1), end)


def year(year: int) -> Range | None:
    return Range(date(year, 1, 1), date(year + 1, 1, 1)) if 1 <= year <= 9998 else None


def months_from(d: date, n: int) -> tuple[int, int]:
    index = d.year * 12 + d.month - 1 + n
    return index // 12, index % 12 + 1


def season(year: int, first_month: int) -> Range:
    """The season starting in ``first_month`` of ``year`` (winter runs into the next year)."""
    start = date(year, first_month, 1)
    y, m = months_from(start, 3)
    return Range(start, date(y, m, 1))


def nearest_month(anchor: date, number: int) -> Range | None:
    """ "in May" with no year: the May nearest the anchor (this year's, last or next)."""
    found = [r for y in (anchor.year - 1, anchor.year, anchor.year + 1) if (r := month(y, number))]
    return min(found, key=lambda r: abs((r.start + timedelta(days=14) - anchor).days))


def week_of(d: date) -> Range:
    monday = d - timedelta(days=d.weekday())
    return Range(monday, monday + timedelta(days=7))


def shift(r: Range, days: int) -> Range:
    return Range(r.start + timedelta(days=days), r.end + timedelta(days=days))
