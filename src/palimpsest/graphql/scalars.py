"""Custom scalars, registered through ``StrawberryConfig.scalar_map`` in schema.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NewType

import strawberry
from graphql import GraphQLError, StringValueNode, ValueNode
from strawberry.types.scalar import ScalarDefinition

from palimpsest.errors import InvalidArgument
from palimpsest.timeparse import parse_time

# GraphQL's Int is 32-bit; SQL row ids, counts and byte sizes need 64.
Int64 = NewType("Int64", int)

# Every date a caller sends (arguments and input fields); resolvers receive a UTC datetime.
Instant = NewType("Instant", datetime)

INSTANT_HELP = (
    "A point in time as the caller writes it: YYYY, YYYY-MM or YYYY-MM-DD (each meaning its "
    "first instant, UTC) or an RFC 3339 timestamp with an offset. Anything else, including a "
    "timestamp without an offset, is INVALID_ARGUMENT."
)


class InstantRefused(GraphQLError, InvalidArgument):
    """A date the Instant scalar refuses. graphql-core keeps a GraphQLError raised while
    coercing as it is (with the variable's name and path, or the literal's location), and
    the error layer reads the INVALID_ARGUMENT code off the PalimpsestError side."""

    def __init__(self, message: str, node: ValueNode | None = None) -> None:
        GraphQLError.__init__(self, message, node)
        self.details: dict[str, Any] = {}


def _instant(value: object, node: ValueNode | None = None) -> datetime:
    if not isinstance(value, str):
        raise InstantRefused("an Instant is a string: YYYY, YYYY-MM, YYYY-MM-DD or RFC 3339", node)
    try:
        return parse_time(value, "Instant")
    except InvalidArgument as e:
        raise InstantRefused(e.message.removeprefix("Instant: "), node) from e


def _instant_literal(node: ValueNode, _variables: dict[str, Any] | None = None) -> datetime:
    return _instant(node.value if isinstance(node, StringValueNode) else None, node)


SCALAR_MAP: dict[object, ScalarDefinition] = {
    Int64: strawberry.scalar(
        name="Int64",
        serialize=int,
        parse_value=int,
        description="A signed 64-bit integer, sent as a JSON number (row ids, counts, bytes).",
    ),
    Instant: strawberry.scalar(
        name="Instant",
        serialize=lambda v: v.isoformat(),
        parse_value=_instant,
        parse_literal=_instant_literal,
        description=INSTANT_HELP,
    ),
}
