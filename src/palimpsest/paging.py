"""Keyset paging for every list that can grow: one page shape and opaque cursors.

A cursor is base64url (no padding) of ``{"l": list name, "p": position}``, where the position
is the sort key of the last row a page returned. It names a place in one list's order and
nothing else: the scope a page reads from always comes from the token, so a cursor from
another scope (or another caller) only says where to start inside the caller's own rows.
A cursor that does not decode, belongs to another list or holds a position of the wrong
shape is an ``INVALID_ARGUMENT``; it is never ignored, which would silently restart the list.
Decoding is the one place a cursor is parsed, for GraphQL and MCP alike, and it is strict: a
position the database could not compare (a count past 64 bits, a digit of another script, an
instant outside years 1-9999 in UTC) is refused here, with the same message as any forgery,
never passed on to fail later as ``INTERNAL``.

Each resolver reads ``limit + 1`` rows after the position: the extra row, never returned,
says whether another page follows.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Generic, TypeVar

import orjson

from palimpsest.errors import InvalidArgument

T = TypeVar("T")
U = TypeVar("U")
DEFAULT_LIMIT = 100
MAX_CURSOR = 2048  # characters; positions are a few short values
MAX_COUNT = 2**63 - 1  # the largest integer the database stores
_ID = re.compile(r"[0-9a-f]{32}")
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
_COUNT = re.compile(r"0|[1-9][0-9]{0,18}")
# What ``datetime.isoformat`` writes, and no other spelling; ASCII digits only.
_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{6})?[+-][0-9]{2}:[0-9]{2}"
)


class Part(Enum):
    """The kinds of value a position holds."""

    ID = "id"  # 32 lowercase hex characters
    TEXT = "text"  # any string (keys, names)
    TIME = "time"  # an ISO 8601 timestamp with offset
    TIME_OR_NULL = "time?"
    COUNT = "count"  # a decimal string of ASCII digits, 0 to MAX_COUNT (revision numbers)


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    cursor: str | None  # pass as ``after`` for the next page; None on the last page

    @property
    def has_more(self) -> bool:
        return self.cursor is not None

    def map(self, convert: Callable[[T], U]) -> Page[U]:
        return Page([convert(x) for x in self.items], self.cursor)


def check_limit(limit: int, maximum: int) -> int:
    if not 1 <= limit <= maximum:
        raise InvalidArgument(f"limit must be between 1 and {maximum}")
    return limit


def encode(list_name: str, position: Sequence[Any]) -> str:
    values = [v.isoformat() if isinstance(v, datetime) else v for v in position]
    raw = orjson.dumps({"l": list_name, "p": values})
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode(cursor: str | None, list_name: str, parts: Sequence[Part]) -> list[Any] | None:
    """The position a cursor names, checked against the list's shape; None for no cursor."""
    if cursor is None:
        return None
    refused = InvalidArgument(
        f"after: not a cursor of {list_name}; pass the `cursor` of the previous page"
    )
    if not 0 < len(cursor) <= MAX_CURSOR or not _BASE64URL.fullmatch(cursor):
        raise refused
    try:
        body = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError) as e:
        raise refused from e
    if not isinstance(body, dict) or set(body) != {"l", "p"} or body["l"] != list_name:
        raise refused
    values = body["p"]
    if not isinstance(values, list) or len(values) != len(parts):
        raise refused
    try:
        return [_check(part, value) for part, value in zip(parts, values, strict=True)]
    except (TypeError, ValueError, OverflowError) as e:
        raise refused from e


def page(
    rows: Sequence[T], limit: int, list_name: str, position: Callable[[T], Sequence[Any]]
) -> Page[T]:
    """The first ``limit`` rows; a cursor when the resolver found the ``limit + 1``-th."""
    items = list(rows[:limit])
    more = len(rows) > limit and bool(items)
    return Page(items, encode(list_name, position(items[-1])) if more else None)


def _check(part: Part, value: Any) -> Any:
    if part is Part.TIME_OR_NULL and value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(part.value)
    if part is Part.ID:
        if not _ID.fullmatch(value):
            raise ValueError(part.value)
        return value
    if part is Part.TEXT:
        return value
    if part is Part.COUNT:
        if not _COUNT.fullmatch(value) or int(value) > MAX_COUNT:
            raise ValueError(part.value)
        return int(value)
    if not _TIME.fullmatch(value):
        raise ValueError(part.value)
    # In UTC, so an instant past 9999-12-31 (a valid text with a negative offset) overflows
    # here, not in the driver.
    return datetime.fromisoformat(value).astimezone(UTC)
