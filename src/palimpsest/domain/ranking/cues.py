"""What a row and a question say about time and speakers (recall levers 3 and 5).

At ingest each row records the years it mentions, whether it carries a time expression, and
for a conversation turn (``Speaker: text``) its speaker. At query time the question is read
for dates, years, "when" and named speakers. Everything here only *prefers* rows (a boost
on the fused score); nothing filters.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from palimpsest.domain.time import timerefs

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_FULL_MONTH = "|".join(name for name in calendar.month_name if name)
_WEEKDAYS = "|".join(name for name in calendar.day_name)
_YEAR = re.compile(r"(?<![\d.,])(1[5-9]\d\d|20\d\d)(?!\d|[.,]\d)")
_SUFFIX = r"(?:st|nd|rd|th)?"

_ISO = re.compile(r"\b(?P<year>\d{4})-(?P<mon>\d{1,2})-(?P<day>\d{1,2})\b")
_DAY_MONTH_YEAR = re.compile(
    rf"\b(?P<day>\d{{1,2}}){_SUFFIX}(?:\s+of)?\s+{_MONTH},?\s+(?P<year>\d{{4}})\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b{_MONTH}\s+(?P<day>\d{{1,2}}){_SUFFIX},?\s+(?P<year>\d{{4}})\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?P<year>\d{{4}})\b", re.I)
# "in May" (any year): the month name capitalised, so "in march" (the verb) does not count.
_IN_MONTH = re.compile(rf"\bin\s+(?:early\s+|late\s+|mid-?)?(?P<month>{_FULL_MONTH})\b")

WHEN_QUESTION = re.compile(
    r"^\s*(when|what time|what date|which (day|week|month|year)|how long ago|"
    r"in which (month|year))\b",
    re.I,
)
_TIME_EXPRESSION = re.compile(
    rf"\b({_FULL_MONTH}|{_WEEKDAYS})\b"
    r"|\b(yesterday|today|tonight|tomorrow|weekend|ago|recently|lately|nowadays)\b"
    r"|\b(last|next|this|past|coming|previous|every)\s+(week|month|year|weekend|summer|"
    r"winter|spring|fall|autumn|night|morning|evening|time|" + _WEEKDAYS.lower() + r")\b"
    r"|\b\d+\s+(days?|weeks?|months?|years?|hours?|decades?)\b"
    r"|\b\d{1,2}(:\d{2})?\s?(am|pm)\b|\b\d{1,2}/\d{1,2}(/\d{2,4})?\b"
    r"|(?<![\d.,])(1[5-9]\d\d|20\d\d)(?!\d|[.,]\d)",
    re.I,
)
_SPEAKER = re.compile(r"^\s*([A-Z][\w'\u2019.-]*(?: [A-Z][\w'\u2019.-]*){0,2}):\s+\S")
MAX_SPEAKER = 40
DATE_SLACK = timedelta(days=3)


@dataclass(frozen=True, slots=True)
class RowCues:
    years: list[int]
    has_time: bool
    speaker: str | None

    def params(self) -> dict[str, object]:
        return {"years": self.years, "has_time": self.has_time, "speaker": self.speaker}


def years_in(text: str) -> list[int]:
    return sorted({int(y) for y in _YEAR.findall(text)})


def speaker_of(text: str) -> str | None:
    """The speaker of a conversation turn written ``Name: text`` (lowercase), else None."""
    m = _SPEAKER.match(text)
    if m is None or len(m[1]) > MAX_SPEAKER:
        return None
    return " ".join(m[1].lower().split())


def row_cues(text: str) -> RowCues:
    return RowCues(years_in(text), bool(_TIME_EXPRESSION.search(text)), speaker_of(text))


@dataclass(frozen=True, slots=True)
class DateWindow:
    """A date the question names: an instant window, or a month of any year."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None  # "in May": that month of any year

    def matches(self, observed: datetime | None) -> bool:
        if observed is None:
            return False
        if self.month is not None:
            return observed.month == self.month
        assert self.start is not None
        assert self.end is not None
        return self.start <= observed < self.end


@dataclass(frozen=True, slots=True)
class QuestionCues:
    dates: tuple[DateWindow, ...]
    years: tuple[int, int] | None  # the range of years the question names
    when: bool
    speakers: tuple[str, ...]  # known speakers the question names
    # Its dates as day ranges, relative ones resolved against the query time or ``when.to``.
    ranges: tuple[timerefs.Range, ...] = ()

    def date_match(self, observed: datetime | None) -> bool:
        return any(d.matches(observed) for d in self.dates)

    def range_match(self, ranges: Iterable[timerefs.Range]) -> float:
        """How specific the most specific of the question's dates a row's resolved ranges
        overlap is (``timerefs.specificity``: 1 a day, 0 a year; 0 when none does). "In May"
        with no year is a month, matched by a row's range of at most a month starting in
        May. A question's year says no more than the year lever already does."""
        months = {d.month for d in self.dates if d.month is not None}
        best = 0.0
        for r in ranges:
            if r.days > timerefs.YEAR_DAYS + 1:  # a row's span of years: the span lever's
                continue
            for mine in self.ranges:
                if r.overlaps(mine):
                    best = max(best, timerefs.specificity(mine.days))
            if r.days <= 31 and r.start.month in months:
                best = max(best, timerefs.specificity(31))
        return best

    def span_match(self, ranges: Iterable[timerefs.Range]) -> float:
        """How well a row's resolved ranges cover the question's spans of a year or longer
        ("from 1975 to Feb 2016", "in the 90s"; shorter dates are ``range_match``'s): the best
        ``timerefs.span_overlap`` (1 the same span; a span holding the question's more than
        one merely touching it); 0 when none overlaps."""
        mine = self.ranges
        inside = {m for m in mine for o in mine if o != m and o.start <= m.start < m.end <= o.end}
        spans = [m for m in mine if m.days >= timerefs.YEAR_DAYS and m not in inside]
        if not spans:
            return 0.0
        return max((timerefs.span_overlap(m, r) for r in ranges for m in spans), default=0.0)

    def year_match(self, years: Iterable[int] | None) -> bool:
        if self.years is None or not years:
            return False
        lo, hi = self.years
        return any(lo - 1 <= y <= hi + 1 for y in years)


def _day(year: int, month: int, day: int) -> DateWindow | None:
    try:
        at = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return DateWindow(at - DATE_SLACK, at + timedelta(days=1) + DATE_SLACK)


def _month(year: int, month: int) -> DateWindow | None:
    if not 1 <= month <= 12 or not 1 <= year <= 9998:
        return None
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return DateWindow(datetime(year, month, 1, tzinfo=UTC), end)


def question_dates(question: str) -> list[DateWindow]:
    """Full dates (within 3 days), "Month YYYY", "in Month" (any year) and bare years."""
    found: list[DateWindow | None] = []
    text = question
    for pattern in (_ISO, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        for m in pattern.finditer(text):
            month = int(m["mon"]) if "mon" in m.groupdict() else _MONTHS[m["month"].lower()]
            found.append(_day(int(m["year"]), month, int(m["day"])))
        text = pattern.sub(" ", text)
    for m in _MONTH_YEAR.finditer(text):
        found.append(_month(int(m["year"]), _MONTHS[m["month"].lower()]))
    text = _MONTH_YEAR.sub(" ", text)
    for m in _IN_MONTH.finditer(text):
        found.append(DateWindow(month=_MONTHS[m["month"].lower()]))
    for y in years_in(text):
        found.append(DateWindow(datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC)))
    return [d for d in found if d is not None]


def named_speakers(question: str, known: Iterable[str]) -> tuple[str, ...]:
    lowered = question.lower()
    return tuple(
        sorted(s for s in set(known) if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", lowered))
    )


def without_speakers(question: str, speakers: Iterable[str]) -> str:
    """The question with the named speakers (and their possessive 's) removed: the text the
    vector leg embeds (lever 3). Unchanged when nothing else would be left."""
    text = question
    for s in sorted(set(speakers), key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(s)}(?:['\u2019]s)?(?!\w)", " ", text, flags=re.I)
    text = " ".join(text.split())
    return text if re.search(r"\w", text) else question


def read_question(
    question: str, known_speakers: Iterable[str], anchor: datetime | None = None
) -> QuestionCues:
    """``anchor``: what the question's relative dates ("last week") are resolved against,
    unless the question names a day outright ("the Sunday before 25 October 2022")."""
    years = list(years_in(question))
    at: date | datetime | None = timerefs.dated_anchor(question) or anchor
    return QuestionCues(
        dates=tuple(question_dates(question)),
        years=(min(years), max(years)) if years else None,
        when=bool(WHEN_QUESTION.match(question)),
        speakers=named_speakers(question, known_speakers),
        # "in May" with no year is matched as any year's May (``range_match``).
        ranges=tuple(timerefs.resolve(question, at, bare_months=False, question=True)),
    )
