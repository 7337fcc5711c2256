"""Custom scalars, registered through ``StrawberryConfig.scalar_map`` in schema.py."""

from __future__ import annotations

from datetime import datetime
from typing import NewType

import strawberry
from strawberry.types.scalar import ScalarDefinition

from palimpsest.domain.time.timeparse import parse_time
from palimpsest.errors import InvalidArgument

# GraphQL's Int is 32-bit; SQL row ids, counts and byte sizes need 64.
Int64 = NewType("Int64", int)

# Every date a caller sends (arguments and input fields); resolvers receive a UTC datetime.
Instant = NewType("Instant", datetime)

INSTANT_HELP = (
    "A point in time as the caller writes it: YYYY, YYYY-MM or YYYY-MM-DD (each meaning its "
    "first instant, UTC) or an RFC 3339 timestamp with an offset. Anything else, including a "
    "timestamp without an offset, is INVALID_ARGUMENT."
)


def _int64(value: object) -> int:
    # Strict like GraphQL's Int (docs/security.md, Strict parsing): no boolean, string or
    # fraction becomes a number, and nothing past 64 bits reaches the database.
    if type(value) is not int or not -(2**63) <= value < 2**63:
        raise InvalidArgument("an Int64 is a JSON integer from -2^63 to 2^63-1")
    return value


def _instant(value: object) -> datetime:
    # graphql-core keeps this error as the cause of the variable's (or literal's) error, so
    # the error layer gives it INVALID_ARGUMENT and the message names the variable and path.
    if not isinstance(value, str):
        raise InvalidArgument("an Instant is a string: YYYY, YYYY-MM, YYYY-MM-DD or RFC 3339")
    return parse_time(value, "Instant")


SCALAR_MAP: dict[object, ScalarDefinition] = {
    Int64: strawberry.scalar(
        name="Int64",
        serialize=int,
        parse_value=_int64,
        description="A signed 64-bit integer, sent as a JSON number (row ids, counts, bytes).",
    ),
    Instant: strawberry.scalar(
        name="Instant",
        serialize=lambda v: v.isoformat(),
        parse_value=_instant,
        description=INSTANT_HELP,
    ),
}
