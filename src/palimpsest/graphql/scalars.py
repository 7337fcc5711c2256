"""Custom scalars, registered through ``StrawberryConfig.scalar_map`` in schema.py."""

from __future__ import annotations

from typing import NewType

import strawberry
from strawberry.types.scalar import ScalarDefinition

# GraphQL's Int is 32-bit; SQL row ids, counts and byte sizes need 64.
Int64 = NewType("Int64", int)

SCALAR_MAP: dict[object, ScalarDefinition] = {
    Int64: strawberry.scalar(
        name="Int64",
        serialize=int,
        parse_value=int,
        description="A signed 64-bit integer, sent as a JSON number (row ids, counts, bytes).",
    ),
}
