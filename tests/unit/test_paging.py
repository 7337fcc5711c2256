from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest

from palimpsest import paging
from palimpsest.errors import InvalidArgument
from palimpsest.paging import Part

FACT = (Part.TIME_OR_NULL, Part.TIME, Part.ID)
ID = "0123456789abcdef" * 2


def raw_cursor(body: object) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(body)).rstrip(b"=").decode()


def test_a_cursor_round_trips_its_position() -> None:
    when = datetime(2020, 7, 4, 12, 30, 0, 123456, tzinfo=UTC)
    cursor = paging.encode("facts", [None, when, ID])
    assert paging.decode(cursor, "facts", FACT) == [None, when, ID]
    plus_two = when.astimezone(timezone(timedelta(hours=2)))
    cursor = paging.encode("facts", [plus_two, when, ID])
    assert paging.decode(cursor, "facts", FACT) == [when, when, ID]
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert paging.decode(None, "facts", FACT) is None


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor!",
        "%%%",
        "a" * (paging.MAX_CURSOR + 1),
        base64.urlsafe_b64encode(b"\xff\xfe").decode().rstrip("="),
        raw_cursor([1, 2]),
        raw_cursor({"l": "facts"}),
        raw_cursor({"l": "facts", "p": [None, "2020-01-01T00:00:00+00:00", ID], "x": 1}),
        raw_cursor({"l": "memories", "p": [None, "2020-01-01T00:00:00+00:00", ID]}),
        raw_cursor({"l": "facts", "p": [None, "2020-01-01T00:00:00+00:00"]}),
        raw_cursor({"l": "facts", "p": "2020"}),
        raw_cursor({"l": "facts", "p": [None, "2020-01-01T00:00:00", ID]}),  # no offset
        raw_cursor({"l": "facts", "p": [None, "yesterday", ID]}),
        raw_cursor({"l": "facts", "p": [None, None, ID]}),
        raw_cursor({"l": "facts", "p": [None, "2020-01-01T00:00:00+00:00", ID.upper()]}),
        raw_cursor({"l": "facts", "p": [None, "2020-01-01T00:00:00+00:00", 7]}),
    ],
)
def test_malformed_or_foreign_cursors_are_refused(cursor: str) -> None:
    with pytest.raises(InvalidArgument, match="after: not a cursor of facts"):
        paging.decode(cursor, "facts", FACT)


def test_text_positions_take_any_string_but_nothing_else() -> None:
    key = 'notes/"quoted" ünïcode \x1f'
    assert paging.decode(paging.encode("memories", [key]), "memories", (Part.TEXT,)) == [key]
    with pytest.raises(InvalidArgument):
        paging.decode(raw_cursor({"l": "memories", "p": [None]}), "memories", (Part.TEXT,))


def test_page_cuts_at_the_limit_and_names_the_last_item() -> None:
    rows = ["a", "b", "c"]
    first = paging.page(rows, 2, "memories", lambda r: [r])
    assert first.items == ["a", "b"]
    assert first.has_more is True
    assert paging.decode(first.cursor, "memories", (Part.TEXT,)) == ["b"]
    last = paging.page(rows, 3, "memories", lambda r: [r])
    assert (last.items, last.cursor, last.has_more) == (rows, None, False)
    empty = paging.page(list[str](), 5, "memories", lambda r: [r])
    assert (empty.items, empty.cursor, empty.has_more) == ([], None, False)
    assert first.map(str.upper).items == ["A", "B"]
    assert first.map(str.upper).cursor == first.cursor


@pytest.mark.parametrize("limit", [0, -1, 1001])
def test_limits_outside_the_range_are_refused(limit: int) -> None:
    with pytest.raises(InvalidArgument, match="between 1 and 1000"):
        paging.check_limit(limit, 1000)
    assert paging.check_limit(1000, 1000) == 1000
