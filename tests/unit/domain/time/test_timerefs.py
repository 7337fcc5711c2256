"""Time expressions resolved to day ranges at ingest, and the boosts that read them (lever 6).

The sentences are written for these tests, in the way people talk in a chat or write a page;
each is resolved against the moment it was said (its row's ``observedAt``).
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
SUNDAY = datetime(2024, 3, 17, 9, 0, tzinfo=UTC)
OCTOBER = datetime(2023, 10, 20, 12, 0, tzinfo=UTC)  # a Friday
JULY = datetime(2023, 7, 4, 12, 0, tzinfo=UTC)  # a Tuesday


def days(start: str, end: str) -> Range:
    return Range(date.fromisoformat(start), date.fromisoformat(end))


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        ("Nina: I finally went to pottery yesterday!", MONDAY, [days("2024-03-10", "2024-03-11")]),
        ("We couldn't sleep last night, so loud.", MONDAY, [days("2024-03-10", "2024-03-11")]),
        ("Tom: I'm flying to Lisbon tomorrow.", MONDAY, [days("2024-03-12", "2024-03-13")]),
        ("Tonight we celebrate!", MONDAY, [days("2024-03-11", "2024-03-12")]),
        ("The day before yesterday I ran 10k.", MONDAY, [days("2024-03-09", "2024-03-10")]),
        ("Last Saturday we took the kids to the zoo.", MONDAY, [days("2024-03-09", "2024-03-10")]),
        ("I met her on Friday at the market.", MONDAY, [days("2024-03-08", "2024-03-09")]),
        ("Last Monday was rough.", MONDAY, [days("2024-03-04", "2024-03-05")]),
        ("Can we talk next Wednesday?", MONDAY, [days("2024-03-13", "2024-03-14")]),
        ("We adopted a puppy two weeks ago.", MONDAY, [days("2024-02-23", "2024-03-01")]),
        ("I started the new job 3 days ago.", MONDAY, [days("2024-03-08", "2024-03-09")]),
        ("A few days ago I saw a double rainbow.", MONDAY, [days("2024-03-05", "2024-03-10")]),
        ("A couple of days ago my sister called.", MONDAY, [days("2024-03-09", "2024-03-10")]),
        ("I quit sugar a month ago.", MONDAY, [days("2024-02-01", "2024-03-01")]),
        ("We moved out here five years ago.", MONDAY, [days("2019-01-01", "2020-01-01")]),
        ("My exam is in two weeks, wish me luck.", MONDAY, [days("2024-03-22", "2024-03-29")]),
        ("I'm starting a pottery course next month.", MONDAY, [days("2024-04-01", "2024-05-01")]),
        ("Last month was all about the garden.", MONDAY, [days("2024-02-01", "2024-03-01")]),
        ("We're so busy this week.", MONDAY, [days("2024-03-11", "2024-03-18")]),
        ("Last week I finished my first painting.", MONDAY, [days("2024-03-04", "2024-03-11")]),
        ("Last year I ran my first marathon.", MONDAY, [days("2023-01-01", "2024-01-01")]),
        ("Next year we want to visit Japan.", MONDAY, [days("2025-01-01", "2026-01-01")]),
        ("We went camping last weekend.", MONDAY, [days("2024-03-09", "2024-03-11")]),
        ("We went camping last weekend.", SUNDAY, [days("2024-03-09", "2024-03-11")]),
        ("Any plans for this weekend?", MONDAY, [days("2024-03-16", "2024-03-18")]),
        ("I mostly relaxed over the weekend.", MONDAY, [days("2024-03-09", "2024-03-11")]),
        ("We're going camping this summer.", MONDAY, [days("2024-06-01", "2024-09-01")]),
        ("Last summer we drove to the coast.", OCTOBER, [days("2023-06-01", "2023-09-01")]),
        ("Last summer we drove to the coast.", JULY, [days("2022-06-01", "2022-09-01")]),
        ("Next winter I'll learn to ski.", OCTOBER, [days("2023-12-01", "2024-03-01")]),
        ("I graduated in 2019 and never looked back.", MONDAY, [days("2019-01-01", "2020-01-01")]),
        ("The rent is due on the 5th.", MONDAY, [days("2024-03-05", "2024-03-06")]),
        ("My birthday is on the 28th!", OCTOBER, [days("2023-10-28", "2023-10-29")]),
        ("Back in August we went to the lake.", OCTOBER, [days("2023-08-01", "2023-09-01")]),
        ("It opened on 7 May 2023 downtown.", MONDAY, [days("2023-05-07", "2023-05-08")]),
        ("It opened on May 7th, 2023.", MONDAY, [days("2023-05-07", "2023-05-08")]),
        ("The log says 2021-11-30.", MONDAY, [days("2021-11-30", "2021-12-01")]),
        ("He joined the club in June 2015.", MONDAY, [days("2015-06-01", "2015-07-01")]),
        ("She played for Ajax from 1998 to 2001.", MONDAY, [days("1998-01-01", "2002-01-01")]),
        (
            "Yesterday was great, and tomorrow I leave.",
            MONDAY,
            [days("2024-03-10", "2024-03-11"), days("2024-03-12", "2024-03-13")],
        ),
    ],
)  # fmt: skip
def test_real_phrasings_resolve_against_when_they_were_said(
    text: str, said: datetime, expected: list[Range]
) -> None:
    assert timerefs.resolve(text, said) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I may go, I might not.",  # may the verb
        "Leaves fall in the park; spring is a coil.",  # fall and spring the words
        "We march in march, says the banner.",  # a lowercase month is a verb
        "Saturdays are for running.",  # a habit, not a day
        "It cost 2,019 dollars and weighed 3.2019 kg.",  # numbers, not years
        "I'll get there someday, recently I've been busy.",  # too vague to be a range
    ],
)
def test_words_that_only_look_like_time_resolve_to_nothing(text: str) -> None:
    assert timerefs.resolve(text, MONDAY) == []


def test_without_an_observed_time_only_absolute_dates_resolve() -> None:
    text = "Yesterday I found the photos from June 2015."
    assert timerefs.resolve(text, None) == [days("2015-06-01", "2015-07-01")]
    assert timerefs.resolve(text, MONDAY) == [
        days("2024-03-10", "2024-03-11"),
        days("2015-06-01", "2015-07-01"),
    ]


def test_resolution_is_deterministic_distinct_and_bounded() -> None:
    years = " ".join(f"in {y}," for y in range(1990, 2010))
    found = timerefs.resolve(years + " and in 1990 again", MONDAY)
    assert len(found) == timerefs.MAX_RANGES
    assert found == sorted(set(found), key=found.index)
    assert found == timerefs.resolve(years + " and in 1990 again", MONDAY)


def test_the_stored_form_is_parallel_lists_of_epoch_days() -> None:
    ranges = [days("1970-01-02", "1970-01-03"), days("2024-03-10", "2024-03-11")]
    stored = timerefs.params(ranges)
    assert stored == {"t_start": [1, 19792], "t_end": [2, 19793]}
    assert timerefs.stored(stored["t_start"], stored["t_end"]) == tuple(ranges)
    assert timerefs.params([]) == {"t_start": None, "t_end": None}
    assert timerefs.stored(None, None) == ()
    assert timerefs.stored([1, 2], [3]) == ()


def test_specificity_prefers_a_day_over_a_week_over_a_month_over_a_year() -> None:
    day, week, month, year = (timerefs.specificity(n) for n in (1, 7, 31, 365))
    assert day == 1.0
    assert day > week > month > year
    assert year == pytest.approx(0.0, abs=0.01)


ON = Levers(time_boost=1.5, time_when_boost=1.3, time_span_boost=1.0)  # spans: test_timespans


def question(text: str, anchor: datetime | None = None) -> cues.QuestionCues:
    return cues.read_question(text, [], anchor)


def test_a_question_date_overlapping_a_resolved_range_boosts_it() -> None:
    lv = ON
    turn = timerefs.resolve("We adopted a puppy yesterday.", datetime(2023, 5, 8, tzinfo=UTC))
    q = question("What did they do on 7 May 2023?")
    assert [b.lever for b in recall_time.boosts(turn, q, lv)] == ["timeRange"]
    assert recall_time.boosts(turn, question("What did they do on 9 June 2023?"), lv) == []
    in_may = question("What did they adopt in May?")  # any year's May
    [month] = recall_time.boosts(turn, in_may, lv)
    [exact] = recall_time.boosts(turn, q, lv)
    assert month.lever == "timeRange"
    assert exact.factor == lv.time_boost > month.factor > 1.0  # a day says more than a month
    # A year overlaps most of what was said that year: the year lever has it already.
    assert recall_time.boosts(turn, question("What did they adopt in 2023?"), lv) == []


def test_a_questions_own_relative_dates_resolve_against_its_anchor() -> None:
    lv = ON
    turn = timerefs.resolve("Lunch with Ana on the 5th.", datetime(2024, 3, 3, tzinfo=UTC))
    q = question("Who did I have lunch with last Tuesday?", datetime(2024, 3, 8, tzinfo=UTC))
    assert q.ranges == (days("2024-03-05", "2024-03-06"),)
    assert [b.lever for b in recall_time.boosts(turn, q, lv)] == ["timeRange"]
    later = question("Who did I have lunch with last Tuesday?", datetime(2024, 4, 8, tzinfo=UTC))
    assert recall_time.boosts(turn, later, lv) == []


def test_when_questions_prefer_specific_ranges_and_never_filter() -> None:
    lv = ON
    q = question("When did Nina go to the pottery class?")
    said = datetime(2024, 3, 11, tzinfo=UTC)
    factors = {
        text: {b.lever: b.factor for b in recall_time.boosts(timerefs.resolve(text, said), q, lv)}
        for text in ("I went yesterday.", "I went last week.", "I went last month.", "In 2019.")
    }
    day, week, month = (factors[t]["whenSpecific"] for t in list(factors)[:3])
    assert day == pytest.approx(lv.time_when_boost)
    assert day > week > month > 1.0
    assert factors["In 2019."] == {}  # a year says nothing more than a year mention does
    assert recall_time.boosts([], q, lv) == []  # no ranges: no boost, still a candidate


def test_a_boost_of_one_switches_each_part_off() -> None:
    turn = timerefs.resolve("I went yesterday.", datetime(2023, 5, 8, tzinfo=UTC))
    q = question("When did I go, on 7 May 2023?")
    assert {b.lever for b in recall_time.boosts(turn, q, ON)} == {
        "timeRange",
        "whenSpecific",
    }
    assert recall_time.boosts(turn, q, Levers(time_boost=1.0, time_when_boost=1.0)) == []


@pytest.mark.parametrize(
    ("text", "observed"),
    [
        ("due 9999-12-31 and then next week", datetime(2023, 5, 7, tzinfo=UTC)),
        ("see you tomorrow, or next summer", datetime(9999, 12, 31, tzinfo=UTC)),
        ("a few days ago, last winter, on the 31st", datetime(1, 1, 2, tzinfo=UTC)),
        (
            "in 99999999999999 years, 99999999999999999999 days ago",
            datetime(2023, 5, 7, tzinfo=UTC),
        ),
    ],
)
def test_dates_past_the_calendars_edges_name_no_range_and_never_fail(
    text: str, observed: datetime
) -> None:
    found = timerefs.resolve(text, observed)
    assert all(date.min <= r.start < r.end <= date.max for r in found)
