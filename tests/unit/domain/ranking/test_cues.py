"""What rows and questions say about time and speakers (recall levers 3 and 5)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from palimpsest.domain.ranking import cues


def at(year: int, month: int, day: int, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def test_rows_record_years_time_expressions_and_speakers() -> None:
    row = cues.row_cues("Caroline: we moved in 2019-2021, and again 1995\u20131999, for $1,500.")
    assert row.years == [1995, 1999, 2019, 2021]
    assert row.has_time
    assert row.speaker == "caroline"
    plain = cues.row_cues("The cat sat on 12015 mats and 3.2015 chairs.")
    assert plain == cues.RowCues([], False, None)
    for text in ("see you tomorrow", "last week", "two days ago", "on Monday", "at 3pm"):
        assert cues.row_cues(text).has_time, text
    assert cues.speaker_of("Dr Ada Lovelace: hello") == "dr ada lovelace"
    assert cues.speaker_of("no colon here") is None
    assert cues.speaker_of("lowercase: not a name") is None


@pytest.mark.parametrize(
    ("question", "inside", "outside"),
    [
        ("What happened on 7 May 2023?", at(2023, 5, 9), at(2023, 5, 12)),
        ("What happened on May 7th, 2023?", at(2023, 5, 4), at(2023, 5, 3)),
        ("What happened on 2023-05-07?", at(2023, 5, 7, 23), at(2023, 6, 7)),
        ("What did she do in June 2022?", at(2022, 6, 30), at(2022, 7, 1)),
        ("What did she do in June?", at(2019, 6, 2), at(2022, 7, 1)),
        ("What did she do in 2021?", at(2021, 12, 31), at(2022, 1, 1)),
    ],
)
def test_question_dates_prefer_matching_observed_times(
    question: str, inside: datetime, outside: datetime
) -> None:
    q = cues.read_question(question, [])
    assert q.date_match(inside)
    assert not q.date_match(outside)
    assert not q.date_match(None)


def test_may_the_verb_is_not_a_month() -> None:
    assert cues.read_question("What may she bring in march?", []).dates == ()


def test_when_questions_and_year_ranges() -> None:
    for text in ("When did she go?", "what date was it", "Which year did he win?", "How long ago?"):
        assert cues.read_question(text, []).when, text
    assert not cues.read_question("Where did she go when it rained?", []).when
    q = cues.read_question("Which team did he play for from 2007 to 2010?", [])
    assert q.years == (2007, 2010)
    assert q.year_match([2011])
    assert not q.year_match([2012])
    assert not q.year_match(None)


def test_speakers_named_in_the_question_leave_the_embedded_text() -> None:
    q = cues.read_question("What is Caroline's job, and Mel's?", ["caroline", "melanie"])
    assert q.speakers == ("caroline",)
    assert cues.without_speakers("What is Caroline's job?", ["caroline"]) == "What is job?"
    assert cues.without_speakers("Caroline?", ["caroline"]) == "Caroline?"  # nothing left
