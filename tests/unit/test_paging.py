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


@pytest.mark.parametrize(
    "time",
    [
        "9999-12-31T23:59:59-12:00",  # past 9999-12-31 in UTC
        "0001-01-01T00:00:00+05:00",  # before 0001-01-01 in UTC
        "2020-01-0\u00b2T00:00:00+00:00",  # a superscript two
        "2020-01-0\u0662T00:00:00+00:00",  # an Arabic-Indic two
        "2020-01-01 00:00:00+00:00",  # not the spelling cursors are written in
        "2020-01-01T00:00:00Z",
        "+2020-01-01T00:00:00+00:00",
        "2020-01-01T00:00:00+00:00\n",
    ],
)
def test_times_outside_the_range_or_the_spelling_are_refused(time: str) -> None:
    cursor = raw_cursor({"l": "facts", "p": [None, time, ID]})
    with pytest.raises(InvalidArgument, match="after: not a cursor of facts"):
        paging.decode(cursor, "facts", FACT)


def test_the_edges_of_the_time_range_decode_in_utc() -> None:
    for text, want in [
        ("9999-12-31T23:59:59.999999+00:00", datetime(9999, 12, 31, 23, 59, 59, 999999, UTC)),
        ("0001-01-01T05:00:00+05:00", datetime(1, 1, 1, tzinfo=UTC)),
    ]:
        [found] = paging.decode(raw_cursor({"l": "m", "p": [text]}), "m", (Part.TIME,)) or []
        assert (found, found.tzinfo) == (want, UTC)


NOT_COUNTS: list[object] = [str(2**63), "9" * 30, "\u00b2", "1\u00b2", "\u0661", "12\u00b3"]
NOT_COUNTS += ["-1", "+1", "01", " 1", "1\n", "", 7, True]


@pytest.mark.parametrize("count", NOT_COUNTS)
def test_counts_are_ascii_decimals_within_64_bits(count: object) -> None:
    cursor = raw_cursor({"l": "documentHistory", "p": [count]})
    with pytest.raises(InvalidArgument, match="after: not a cursor of documentHistory"):
        paging.decode(cursor, "documentHistory", (Part.COUNT,))


def test_a_count_round_trips_up_to_the_largest_stored_integer() -> None:
    for n in (0, 1, paging.MAX_COUNT):
        cursor = paging.encode("documentHistory", [str(n)])
        assert paging.decode(cursor, "documentHistory", (Part.COUNT,)) == [n]


@pytest.mark.parametrize("tail", ["\n", " ", "=", "\u00e9"])
def test_a_cursor_or_an_id_with_anything_after_it_is_refused(tail: str) -> None:
    good = paging.encode("facts", [None, "2020-01-01T00:00:00+00:00", ID])
    assert paging.decode(good, "facts", FACT) is not None
    with pytest.raises(InvalidArgument):
        paging.decode(good + tail, "facts", FACT)
    with pytest.raises(InvalidArgument):
        paging.decode(raw_cursor({"l": "f", "p": [ID + tail]}), "f", (Part.ID,))
