from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.timeparse import check_interval, parse_optional, parse_time


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
    ["", "soon", "2020-13", "2020-02-30", "20", "2020-07-04T12:30:00", "2020/07/04", "1e3"],
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
