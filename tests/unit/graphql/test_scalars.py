"""The custom scalars parse strictly: what is not the scalar's JSON form is INVALID_ARGUMENT."""

from __future__ import annotations

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.graphql.scalars import SCALAR_MAP, Int64


def parse(value: object) -> object:
    parse_value = SCALAR_MAP[Int64].parse_value
    assert parse_value is not None
    return parse_value(value)


@pytest.mark.parametrize("value", [0, -(2**63), 2**63 - 1, 7])
def test_int64_takes_json_integers_within_64_bits(value: int) -> None:
    assert parse(value) == value


@pytest.mark.parametrize("value", [True, False, "7", "\u00b2", 1.0, 1.5, 2**63, -(2**63) - 1, None])
def test_int64_refuses_anything_else(value: object) -> None:
    with pytest.raises(InvalidArgument, match="Int64"):
        parse(value)
