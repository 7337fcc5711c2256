"""Time expressions resolved to absolute date ranges (recall lever 6, time resolved at ingest).

A row's relative expressions ("yesterday", "last Saturday", "two weeks ago", "next month",
"this summer", "on the 5th") are resolved against its ``observedAt``; absolute ones ("in
2019", "May 2023", "7 May 2023") need no anchor. Each becomes a half-open range of days
``[start, end)``, stored with the row as two parallel lists of epoch days (``t_start``,
``t_end``) that recall reads with its other cues. The rules are written here (no parser
library): each is anchored on a word that says "time", so "may" the verb or "fall" the verb
never count, and the answer is the same on every run. Weeks start on Monday; seasons are
the northern meteorological ones (spring is March to May). A phrase the rules do not know
resolves to nothing, never to a guess.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta

# Re-exported: the ranges and their arithmetic are part of this module's interface.
from palimpsest.domain.time.dateranges import EPOCH as EPOCH
from palimpsest.domain.time.dateranges import YEAR_DAYS as YEAR_DAYS
from palimpsest.domain.time.dateranges import Range as Range
from palimpsest.domain.time.dateranges import day as _day
from palimpsest.domain.time.dateranges import epoch_day as epoch_day
from palimpsest.domain.time.dateranges import from_epoch_day as from_epoch_day
from palimpsest.domain.time.dateranges import month as _month
from palimpsest.domain.time.dateranges import months_from as _months_from
from palimpsest.domain.time.dateranges import nearest_month as _nearest_month
from palimpsest.domain.time.dateranges import season as _season
from palimpsest.domain.time.dateranges import shift as _shift
from palimpsest.domain.time.dateranges import span_overlap as span_overlap
from palimpsest.domain.time.dateranges import specificity as specificity
from palimpsest.domain.time.dateranges import week_of as _week_of
from palimpsest.domain.time.dateranges import year as _year

MAX_RANGES = 8  # per row: a page of history names many years, recall needs only a few

_MONTHS = {n.lower(): i for i, n in enumerate(calendar.month_name) if n}
_MONTHS |= {n.lower(): i for i, n in enumerate(calendar.month_abbr) if n}
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY_NAMES = [n.lower() for n in calendar.day_name]
_WEEKDAY = r"(?P<weekday>" + "|".join(_WEEKDAY_NAMES) + r")"
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
_COUNT = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_SUFFIX = r"(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>1[5-9]\d\d|20\d\d)"


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[" ".join(text.lower().split())]


def _ago(a: date, count: str, unit: str, sign: int) -> Range | None:
    """``count`` units before (sign -1) or after (+1) the anchor. "A few days" is 2 to 6."""
    n = _count(count)
    if unit == "day" and count.lower().split()[-1] in ("few", "several"):
        near, far = a + timedelta(days=sign * 2), a + timedelta(days=sign * 6)
        return Range(min(near, far), max(near, far) + timedelta(days=1))
    if unit == "day":
        return _day(a + timedelta(days=sign * n))
    if unit == "week":
        return Range(a + timedelta(days=sign * 7 * n - 3), a + timedelta(days=sign * 7 * n + 4))
    if unit == "month":
        return _month(*_months_from(a, sign * n))
    return _year(a.year + sign * n)


def _relative_unit(a: date, which: str, unit: str) -> Range | None:
    step = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[which]
    if unit == "week":
        return _shift(_week_of(a), 7 * step)
    if unit == "month":
        return _month(*_months_from(a, step))
    if unit == "year":
        return _year(a.year + step)
    saturday = a + timedelta(days=5 - a.weekday())  # the Saturday of the anchor's week
    weekend = Range(saturday, saturday + timedelta(days=2))
    if step < 0 and weekend.end > a:  # not over yet: the one before
        weekend = _shift(weekend, -7)
    return _shift(weekend, 7 * max(step, 0))


# A clause about what is to come: "see you on Friday", "I'll call her Friday".
_FUTURE = re.compile(
    r"(?<!\w)(?:will|shall|won't|going\s+to|gonna|see\s+you|plan(?:ning)?\s+to|hope\s+to|"
    r"can't\s+wait|looking\s+forward|let's)(?!\w)|\w['\u2019]ll(?!\w)",
    re.I,
)
_CLAUSE_END = re.compile(r"[.!?;\n]")


def _future(m: re.Match[str]) -> bool:
    """Whether the clause holding ``m`` speaks of the future (its words up to the match)."""
    before = m.string[: m.start()]
    ends = [e.end() for e in _CLAUSE_END.finditer(before)]
    return _FUTURE.search(before[ends[-1] if ends else 0 :]) is not None


def _weekday(a: date, which: str | None, weekday: str, future: bool = False) -> Range:
    """ "last Friday", "on Friday": the latest before the anchor; "next"/"this", or "on
    Friday" in a clause about the future ("see you on Friday"): the next."""
    wanted = _WEEKDAY_NAMES.index(weekday.lower())
    if which in ("next", "coming", "this") or (future and which in (None, "on")):
        return _day(a + timedelta(days=(wanted - a.weekday() - 1) % 7 + 1))
    return _day(a - timedelta(days=(a.weekday() - wanted - 1) % 7 + 1))


def _relative_season(a: date, which: str, season: str) -> Range:
    first = _SEASONS[season.lower()]
    # The season that started in the anchor's year, moved to be the one meant.
    this = _season(a.year - (first == 12 and a.month < 3), first)
    if which == "this":
        return this
    if which in ("last", "past", "previous"):
        return this if this.end <= a else _season(this.start.year - 1, first)
    return this if this.start > a else _season(this.start.year + 1, first)


def _on_the(a: date, day: int) -> Range | None:
    """ "on the 5th": the 5th nearest the anchor (this month's, last or next)."""
    found: list[Range] = []
    for n in (-1, 0, 1):
        y, m = _months_from(a, n)
        if day <= calendar.monthrange(y, m)[1]:
            found.append(_day(date(y, m, day)))
    return min(found, key=lambda r: abs((r.start - a).days)) if found else None


def _full_date(year: int, month: int, day: int) -> Range | None:
    try:
        return _day(date(year, month, day))
    except ValueError:
        return None


Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date | None], Range | None]]

OPEN_YEARS = 10  # an open end from a year ("until 2004" on a page, "before 2001") reaches this far
# A span's ends: a full date, a month and year, a year, or (anchored) a bare month name.
_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_END_DATE = (
    rf"\d{{1,2}}{_SUFFIX}(?:\s+of)?\s+(?:{_NAMES})\.?,?\s+\d{{4}}"
    rf"|(?:{_NAMES})\.?\s+\d{{1,2}}{_SUFFIX},?\s+\d{{4}}"
    rf"|(?:{_NAMES})\.?,?\s+(?:of\s+)?\d{{4}}|1[5-9]\d\d|20\d\d"
)
_BARE = "|".join(n for n in calendar.month_name if n)  # capitalised, so "march" the verb is not
_END = rf"(?:{_END_DATE}|{_BARE})"
_SPLIT_DASH = r"\s*[-\u2013\u2014]\s*"
_TO = r"\s+(?:to|until|till|through|thru)\s+|" + _SPLIT_DASH


def _end_point(text: str, anchor: date | None, near: date | None = None) -> Range | None:
    """One end of a span: its own range; a bare month is the one nearest ``near`` (else the
    anchor), and at the far end of a span the first such month from ``near`` on."""
    text = " ".join(text.split())
    if text in _BARE.split("|"):
        ref = near or anchor
        if ref is None:
            return None
        month = _MONTHS[text.lower()]
        if near is not None:
            return _month(near.year + (month < near.month), month)
        return _nearest_month(ref, month)
    for pattern, rule in RULES[1:4] + RULES[-1:]:
        if (m := pattern.fullmatch(text)) is not None:
            return rule(m, anchor)
    return None


def _span(m: re.Match[str], a: date | None) -> Range | None:
    """ "from 1975 to Feb 2016", "between 1990 and 1995", "1998-2001", "May to July": from the
    start of the first end to the end of the second (a two-digit second year as in 1990-95;
    a bare first month takes its year from the second end: "from May to July 2020")."""
    b = m["b"]
    bare = _BARE.split("|")
    if " ".join(m["a"].split()) in bare and b not in bare and not b.isdigit():
        if (second := _end_point(b, a)) is None:
            return None
        month = _MONTHS[" ".join(m["a"].split()).lower()]
        first = _month(second.start.year - (month > second.start.month), month)
        return Range(first.start, second.end) if first is not None else None
    if (first := _end_point(m["a"], a)) is None:
        return None
    if b.isdigit() and len(b) == 2:
        b = f"{first.start.year // 100}{b}"
    second = _end_point(b, a, near=first.start if m["b"] in _BARE.split("|") else None)
    if second is None or second.end <= first.start:
        return None
    return Range(first.start, second.end)


def _open(m: re.Match[str], a: date | None) -> Range | None:
    """ "since 2010": to the anchor (a decade with none, or when the anchor is before it);
    "until 2004", "before 2001": the decade up to it; "after 1995": the decade after it."""
    word = m["word"].lower()
    if (point := _end_point(m["a"], a)) is None:
        return None
    if word == "since" and a is not None and a > point.start:
        return Range(point.start, a + timedelta(days=1))
    if word in ("since", "after"):
        start = point.start if word == "since" else point.end
        return Range(start, _reach(start, point, 1))
    end = point.start if word == "before" else point.end
    return Range(_reach(end, point, -1), end)


def _reach(d: date, point: Range, sign: int) -> date:
    """How far an open end reaches from ``d``: a decade from a year ("before 2001"), a year
    from a month, a week from a day ("the Sunday before 25 October 2022")."""
    if point.days <= 1:
        return d + timedelta(days=sign * 7)
    n = sign * (OPEN_YEARS if point.days >= YEAR_DAYS else 1)
    return date(d.year + n, d.month, min(d.day, 28) if d.month == 2 else d.day)


def dated_anchor(text: str) -> date | None:
    """The day a text names outright ("on 23 January 2022", "before April 10, 2023"): what a
    question's relative dates around it ("last Friday on 23 January 2022") are counted from."""
    for pattern, rule in RULES[:3]:
        if (m := pattern.search(text)) is not None and (r := rule(m, None)) is not None:
            return r.start
    return None


def _decade(m: re.Match[str], a: date | None) -> Range | None:
    """ "the 1990s", "the '90s", "the 90s": that decade (two digits: the 1900s' decade)."""
    year = int(m["dec"]) if m["dec"] else 1900 + int(m["dec2"])
    return Range(date(year, 1, 1), date(year + 10, 1, 1)) if year % 10 == 0 else None


def _anchored(
    resolve: Callable[[re.Match[str], date], Range | None],
) -> Callable[[re.Match[str], date | None], Range | None]:
    return lambda m, a: None if a is None else resolve(m, a)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + pattern + r"(?![\w-])", re.I)


# "in May": the month name capitalised, so "in march" (the verb) does not count.
IN_MONTH = re.compile(
    r"(?<![\w-])(?:in|during|since|until|by)\s+(?:early\s+|late\s+|mid-?)?(?P<month>"
    + "|".join(n for n in calendar.month_name if n)
    + r")(?![\w-])"
)
_WHICH = r"(?P<which>last|past|previous|this|next|coming)"
# Most specific first: a match consumes its text, so "7 May 2023" is not also "May 2023".
RULES: list[Rule] = [
    (
        _rx(r"(?P<year>\d{4})-(?P<mon>\d{1,2})-(?P<day>\d{1,2})"),
        lambda m, a: _full_date(int(m["year"]), int(m["mon"]), int(m["day"])),
    ),
    (
        _rx(rf"(?P<day>\d{{1,2}}){_SUFFIX}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}"),
        lambda m, a: _full_date(int(m["year"]), _MONTHS[m["month"].lower()], int(m["day"])),
    ),
    (
        _rx(rf"{_MONTH}\s+(?P<day>\d{{1,2}}){_SUFFIX},?\s+{_YEAR}"),
        lambda m, a: _full_date(int(m["year"]), _MONTHS[m["month"].lower()], int(m["day"])),
    ),
    (
        _rx(rf"{_MONTH},?\s+(?:of\s+)?{_YEAR}"),
        lambda m, a: _month(int(m["year"]), _MONTHS[m["month"].lower()]),
    ),
    (_rx(r"the\s+day\s+before\s+yesterday"), _anchored(lambda m, a: _day(a - timedelta(days=2)))),
    (_rx(r"the\s+day\s+after\s+tomorrow"), _anchored(lambda m, a: _day(a + timedelta(days=2)))),
    (_rx(r"yesterday|last\s+night"), _anchored(lambda m, a: _day(a - timedelta(days=1)))),
    (_rx(r"tomorrow"), _anchored(lambda m, a: _day(a + timedelta(days=1)))),
    (
        _rx(r"today|tonight|this\s+(?:morning|afternoon|evening)"),
        _anchored(lambda m, a: _day(a)),
    ),
    (
        _rx(rf"{_COUNT}\s+{_UNIT}\s+(?:ago|back|before\s+now)"),
        _anchored(lambda m, a: _ago(a, m["n"], m["unit"].lower(), -1)),
    ),
    (
        _rx(rf"in\s+{_COUNT}\s+{_UNIT}(?:'?s)?(?:\s+time)?"),
        _anchored(lambda m, a: _ago(a, m["n"], m["unit"].lower(), 1)),
    ),
    (
        _rx(r"the\s+other\s+day"),
        _anchored(lambda m, a: Range(a - timedelta(days=7), a)),
    ),
    (
        _rx(rf"{_WHICH}\s+(?P<unit>week|month|year|weekend)"),
        _anchored(lambda m, a: _relative_unit(a, m["which"].lower(), m["unit"].lower())),
    ),
    (
        _rx(r"(?:over|on)\s+the\s+weekend"),
        _anchored(lambda m, a: _relative_unit(a, "last", "weekend")),
    ),
    (
        _rx(_WHICH + r"\s+(?P<season>" + "|".join(_SEASONS) + ")"),
        _anchored(lambda m, a: _relative_season(a, m["which"].lower(), m["season"])),
    ),
    (
        _rx(rf"(?:(?P<which>last|this\s+past|past|previous|next|coming|this|on)\s+)?{_WEEKDAY}"),
        _anchored(
            lambda m, a: _weekday(a, (m["which"] or "").lower() or None, m["weekday"], _future(m))
        ),
    ),
    (
        _rx(rf"on\s+the\s+(?P<day>\d{{1,2}}){_SUFFIX}"),
        _anchored(lambda m, a: _on_the(a, int(m["day"]))),
    ),
    (IN_MONTH, _anchored(lambda m, a: _nearest_month(a, _MONTHS[m["month"].lower()]))),
    (_rx(r"(?<![\d.,])" + _YEAR + r"(?![.,]\d)"), lambda m, a: _year(int(m["year"]))),
]


# Spans and open ends come before their ends' own rules, so "1998-2001" is one range.
SPANS: list[Rule] = [
    (_rx(rf"(?:from\s+)?(?P<a>{_END})(?:{_TO})(?P<b>{_END}|\d\d)"), _span),
    (_rx(rf"between\s+(?P<a>{_END})\s+and\s+(?P<b>{_END})"), _span),
    (_rx(rf"(?P<word>since|until|till|up\s+to|through)\s+(?P<a>{_END_DATE})"), _open),
    (_rx(r"(?:the\s+)?(?P<dec>1[5-9]\d0|20\d0)'?s|the\s+'?(?P<dec2>\d0)'?s"), _decade),
]
# Read in a question only ("before 2001": a row saying so is rarely about that time).
SOFT: list[Rule] = [(_rx(rf"(?P<word>before|after)\s+(?P<a>{_END_DATE})"), _open)]


def resolve(
    text: str,
    observed: datetime | date | None,
    *,
    bare_months: bool = True,
    question: bool = False,
) -> list[Range]:
    """The distinct ranges ``text`` names, in the order they appear, at most ``MAX_RANGES``;
    relative ones only when ``observed`` is given. ``bare_months``: resolve "in May" to the
    May nearest ``observed`` (a question matches it as any year's May instead).
    ``question``: also "before 2001" and "after 1995" (``SOFT``)."""
    anchor = observed.date() if isinstance(observed, datetime) else observed
    found: list[tuple[int, Range]] = []
    taken: list[tuple[int, int]] = []
    for pattern, rule in (SOFT if question else []) + SPANS + RULES:
        for m in pattern.finditer(text):
            if pattern is IN_MONTH and not bare_months:
                taken.append(m.span())
                continue
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            try:
                r = rule(m, anchor)
            except (OverflowError, ValueError):  # past year 9999 or before year 1: no range
                r = None
            if r is None and (pattern, rule) in SPANS:  # not a span: its ends may still count
                continue
            taken.append(m.span())
            if r is not None:
                found.append((m.start(), r))
            if r is not None and question and rule is _span:  # its ends too ("Nov 1920")
                ends = [(m.start(g), _end_point(m[g], anchor)) for g in "ab" if len(m[g]) > 2]
                found += [(at, e) for at, e in ends if e is not None]
    out: list[Range] = []
    for _, r in sorted(found, key=lambda f: f[0]):
        if r not in out:
            out.append(r)
    return out[:MAX_RANGES]


def params(ranges: Iterable[Range]) -> dict[str, list[int] | None]:
    """The stored form: parallel lists of epoch days, null (no property) when there are none."""
    rs = list(ranges)
    if not rs:
        return {"t_start": None, "t_end": None}
    return {"t_start": [epoch_day(r.start) for r in rs], "t_end": [epoch_day(r.end) for r in rs]}


def stored(starts: list[int] | None, ends: list[int] | None) -> tuple[Range, ...]:
    """The ranges as stored (no property, or lists that disagree: none)."""
    if not starts or not ends or len(starts) != len(ends):
        return ()
    pairs = zip(starts, ends, strict=True)
    return tuple(Range(from_epoch_day(s), from_epoch_day(e)) for s, e in pairs)
