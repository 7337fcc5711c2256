from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from palimpsest.domain.time.timeparse import check_interval, parse_optional, parse_time
from palimpsest.errors import InvalidArgument


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020", datetime(2020, 1, 1, tzinfo=UTC)),
        ("2020-07", datetime(2020, 7, 1, tzinfo=UTC)),
        ("2020-07-04", datetime(2020, 7, 4, tzinfo=UTC)),
        ("2020-07-04T12:30:00Z", datetime(2020, 7, 4, 12, 30, tzinfo=UTC)),
        ("2020-07-04T14:30:00+02:00", datetime(2020, 7, 4, 12, 30, tzinfo=UTC)),
        ("2020-07-04t12:30z", datetime(2020, 7, 4, 12, 30, tzinfo=UTC)),
        ("2020-07-04T12:30:00.123456789Z", datetime(2020, 7, 4, 12, 30, 0, 123456, tzinfo=UTC)),
        (" 1999 ", datetime(1999, 1, 1, tzinfo=UTC)),
    ],
)
def test_accepted_forms(text: str, expected: datetime) -> None:
    assert parse_time(text, "validAt") == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "soon",
        "2020-13",
        "2020-02-30",
        "20",
        "2020-07-04T12:30:00",
        "2020/07/04",
        "1e3",
        "9999-12-31T23:59:59-23:59",  # a valid text whose UTC instant is past year 9999
        "0001-01-01T00:00:00+00:01",  # and before year 1
        "0000",
        "\u0662\u0660\u0662\u0660",  # Arabic-Indic digits
    ],
)
def test_refused_forms_name_the_field(text: str) -> None:
    with pytest.raises(InvalidArgument, match="asOf"):
        parse_time(text, "asOf")


def test_optional_and_interval_order() -> None:
    assert parse_optional(None, "x") is None
    start = datetime(2020, 1, 1, tzinfo=timezone(timedelta(hours=0)))
    check_interval(start, None)
    check_interval(None, start)
    check_interval(start, start + timedelta(seconds=1))
    for end in (start, start - timedelta(days=1)):
        with pytest.raises(InvalidArgument, match="after"):
            check_interval(start, end)


def test_the_ends_of_the_range_parse() -> None:
    assert parse_time("9999-12-31T23:59:59Z", "asOf") == datetime(
        9999, 12, 31, 23, 59, 59, tzinfo=UTC
    )
    assert parse_time("0001-01-01T23:59:00+23:59", "asOf") == datetime(1, 1, 1, 0, 0, tzinfo=UTC)


def test_refusals_do_not_echo_long_values() -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_time("x" * 10_000, "asOf")
    assert len(refused.value.message) < 200
