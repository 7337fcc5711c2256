"""``dateranges``: half-open day ranges at the edges of months, years and seasons."""

from __future__ import annotations

from datetime import date

import pytest

from palimpsest.domain.time import dateranges as dr
from palimpsest.domain.time.dateranges import Range


def test_december_ends_on_the_first_of_the_next_year() -> None:
    assert dr.month(2023, 12) == Range(date(2023, 12, 1), date(2024, 1, 1))


@pytest.mark.parametrize(("year", "month"), [(0, 5), (9999, 5), (2023, 0), (2023, 13)])
def test_a_month_outside_the_calendar_is_no_range(year: int, month: int) -> None:
    assert dr.month(year, month) is None


def test_winter_runs_into_the_next_year() -> None:
    assert dr.season(2023, 12) == Range(date(2023, 12, 1), date(2024, 3, 1))


def test_a_bare_month_is_the_one_nearest_the_anchor() -> None:
    assert dr.nearest_month(date(2024, 1, 10), 12) == dr.month(2023, 12)
    assert dr.nearest_month(date(2024, 11, 20), 1) == dr.month(2025, 1)


def test_a_week_starts_on_monday() -> None:
    assert dr.week_of(date(2024, 3, 14)) == Range(date(2024, 3, 11), date(2024, 3, 18))


def test_epoch_days_round_trip() -> None:
    assert dr.from_epoch_day(dr.epoch_day(date(1999, 12, 31))) == date(1999, 12, 31)


def test_the_same_span_overlaps_fully_and_a_disjoint_one_not_at_all() -> None:
    span = Range(date(1998, 1, 1), date(2002, 1, 1))
    assert dr.span_overlap(span, span) == 1.0
    assert dr.span_overlap(span, dr.shift(span, 5000)) == 0.0
