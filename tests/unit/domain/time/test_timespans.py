"""Spans and open ends ("from 1975 to Feb 2016", "since 2010"), future tense, and the
span lever that grades how well a chunk's ranges cover a question's span (lever 6).

The sentences are written for these tests; each is resolved against when it was said.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from palimpsest.domain.ranking import cues
from palimpsest.domain.ranking.fusion import Levers
from palimpsest.domain.time import timerefs
from palimpsest.domain.time.timerefs import Range
from palimpsest.resolvers.recall import time_boosts as recall_time

MONDAY = datetime(2024, 3, 11, 18, 30, tzinfo=UTC)  # a Monday evening
THURSDAY = datetime(2023, 6, 15, 9, 0, tzinfo=UTC)


def days(start: str, end: str) -> Range:
    return Range(date.fromisoformat(start), date.fromisoformat(end))


def year(n: int) -> Range:
    return Range(date(n, 1, 1), date(n + 1, 1, 1))


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        ("Our lab ran it from 1975 to Feb 2016.", MONDAY, [days("1975-01-01", "2016-03-01")]),
        ("He coached between 1990 and 1995.", MONDAY, [days("1990-01-01", "1996-01-01")]),
        ("Rector of the college 1998-2001, then dean.", MONDAY, [days("1998-01-01", "2002-01-01")]),
        ("- 1642\u20131651 : Thomas Webb", None, [days("1642-01-01", "1652-01-01")]),
        ("Mayor (1990\u201395) of the town.", None, [days("1990-01-01", "1996-01-01")]),
        ("It aired from Jun 1981 to Oct 1983.", None, [days("1981-06-01", "1983-11-01")]),
        ("She chaired it from 3 May 2010 to June 2011.", None, [days("2010-05-03", "2011-07-01")]),
        ("We rented the flat from May to July.", MONDAY, [days("2024-05-01", "2024-08-01")]),
        ("We sublet it from May to July 2020.", MONDAY, [days("2020-05-01", "2020-08-01")]),
        ("It ran from November to February 2021.", MONDAY, [days("2020-11-01", "2021-03-01")]),
        ("The pool is shut from November to February.", MONDAY, [days("2023-11-01", "2024-03-01")]),
        ("I've lived in Leeds since 2010.", MONDAY, [days("2010-01-01", "2024-03-12")]),
        ("The works have run since 2010.", None, [days("2010-01-01", "2020-01-01")]),
        ("He kept the shop until 2004.", MONDAY, [days("1995-01-01", "2005-01-01")]),
        ("Mum grew up in the 90s near the coast.", MONDAY, [days("1990-01-01", "2000-01-01")]),
        ("Rents doubled during the 2000s.", MONDAY, [days("2000-01-01", "2010-01-01")]),
        ("Sales in 2019 and 2020 were flat.", MONDAY, [year(2019), year(2020)]),
        # Not a span (the second end comes first): its ends still count, each a year.
        ("Scores from 2016 to 1975, reversed.", MONDAY, [year(2016), year(1975)]),
        # Future tense resolves forward; the past stays behind.
        ("See you on Friday!", MONDAY, [days("2024-03-15", "2024-03-16")]),
        ("I'll call the vet Friday.", MONDAY, [days("2024-03-15", "2024-03-16")]),
        ("I met her on Friday. We will talk again.", MONDAY, [days("2024-03-08", "2024-03-09")]),
        ("Next week we're going to Rome.", THURSDAY, [days("2023-06-19", "2023-06-26")]),
        ("I'll finish the painting tomorrow.", THURSDAY, [days("2023-06-16", "2023-06-17")]),
    ],
)  # fmt: skip
def test_spans_open_ends_and_the_future(
    text: str, said: datetime | None, expected: list[Range]
) -> None:
    assert timerefs.resolve(text, said) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The score went from 10 to 20 points.",  # numbers, not years
        "She is in her 90s and still swims.",  # an age, not a decade
        "Call 0161-2001 for bookings.",  # a phone number's digits are not years
    ],
)
def test_ranges_of_numbers_are_not_spans(text: str) -> None:
    assert timerefs.resolve(text, MONDAY) == []


def test_before_and_after_are_soft_ranges_in_a_question_only() -> None:
    assert timerefs.resolve("Where did she work before 2001?", MONDAY, question=True) == [
        days("1991-01-01", "2001-01-01")
    ]
    assert timerefs.resolve("Who ran it after 1995?", MONDAY, question=True) == [
        days("1996-01-01", "2006-01-01")
    ]
    # In a row, "before 2001" says only that 2001 was mentioned.
    assert timerefs.resolve("We left before 2001.", MONDAY) == [days("2001-01-01", "2002-01-01")]


def test_span_overlap_prefers_the_same_span_then_one_holding_the_question() -> None:
    asked = days("1998-01-01", "1999-01-01")
    same = timerefs.span_overlap(asked, asked)
    holding = timerefs.span_overlap(asked, days("1995-01-01", "2002-01-01"))
    touching = timerefs.span_overlap(asked, days("1990-01-01", "1999-01-01"))
    assert same == 1.0
    assert same > holding > touching > 0.0
    assert timerefs.span_overlap(asked, days("2001-01-01", "2002-01-01")) == 0.0


ON = Levers(time_boost=1.5, time_when_boost=1.0, time_span_boost=1.5)


def test_a_question_span_boosts_the_chunk_that_covers_it_most() -> None:
    q = cues.read_question("Who led the town of Oakridge from 2000 to 2016?", [])
    assert q.ranges == (days("2000-01-01", "2017-01-01"), year(2000), year(2016))  # and its ends

    def factor(text: str) -> float:
        found = recall_time.boosts(timerefs.resolve(text, None), q, ON)
        return max((b.factor for b in found if b.lever == "timeSpan"), default=1.0)

    exact = factor("- Ada Brook 2000\u20132016")
    longer = factor("- Ada Brook 1994\u20132016")
    inside = factor("In 2004 the town hall burned.")
    elsewhere = factor("- Ben Hale 1980\u20131999")
    assert exact == pytest.approx(ON.time_span_boost)
    assert exact > longer > inside > elsewhere == 1.0
    off = Levers(time_boost=1.5, time_when_boost=1.0, time_span_boost=1.0)
    assert recall_time.boosts(timerefs.resolve("- Ada Brook 2000\u20132016", None), q, off) == []


def test_a_questions_decade_and_open_end_are_spans_too() -> None:
    chunk = timerefs.resolve("She taught in Lyon from 1992 to 1997.", None)
    for asked in ("Where did she teach in the 90s?", "Where did she teach before 2001?"):
        q = cues.read_question(asked, [])
        assert [b.lever for b in recall_time.boosts(chunk, q, ON)] == ["timeSpan"]
    # A short question date is the graded overlap's (a day most), not the span lever's.
    day = cues.read_question("What happened on 3 May 1994?", [])
    assert "timeSpan" not in [b.lever for b in recall_time.boosts(chunk, day, ON)]


def test_a_question_naming_a_day_counts_its_relative_dates_from_that_day() -> None:
    asked = datetime(2026, 1, 5, tzinfo=UTC)  # long after: the named day is the anchor
    q = cues.read_question("What did Ivo paint the Sunday before 25 October 2022?", [], asked)
    assert days("2022-10-23", "2022-10-24") in q.ranges
    assert days("2022-10-18", "2022-10-25") in q.ranges  # "before" a day: the week before it
    plain = cues.read_question("What did Ivo paint last Sunday?", [], asked)
    assert plain.ranges == (days("2026-01-04", "2026-01-05"),)  # no day named: the query time


def test_a_question_span_keeps_its_ends_for_the_graded_overlap() -> None:
    q = cues.read_question("What did the ship do from Nov 1920 to Aug 1922?", [])
    assert q.ranges == (
        days("1920-11-01", "1922-09-01"),
        days("1920-11-01", "1920-12-01"),
        days("1922-08-01", "1922-09-01"),
    )
    chunk = timerefs.resolve("She was laid down in November 1920 at Camden.", None)
    [overlap] = recall_time.boosts(chunk, q, Levers(time_boost=1.5, time_span_boost=1.0))
    assert overlap.lever == "timeRange"
    assert overlap.factor == pytest.approx(1.0 + 0.5 * timerefs.specificity(30))  # a month


def test_a_chunks_span_of_years_is_not_a_match_for_a_questions_month() -> None:
    q = cues.read_question("What did the ship do from Nov 1920 to Aug 1922?", [])
    years = timerefs.resolve("She served with the fleet 1919-1921.", None)
    assert recall_time.boosts(years, q, Levers(time_boost=1.5, time_span_boost=1.0)) == []
