"""Vector parameters go to the driver as ``Numbers``: packed byte for byte as the plain list,
with a ``repr`` that never spells the values out."""

from __future__ import annotations

from typing import Any

from neo4j._codec.hydration.bolt.v3 import HydrationHandler
from neo4j._codec.packstream.v2 import Packer

from palimpsest.cypher.driver.quiet_params import Numbers, quiet

VECTOR = [i / 7 for i in range(384)]


def packed(value: Any) -> bytes:
    out = bytearray()

    class Sink:
        def write(self, data: bytes) -> None:
            out.extend(data)

    packer = Packer(Sink())  # type: ignore[no-untyped-call]
    packer._pack(value, dehydration_hooks=HydrationHandler().dehydration_hooks)  # type: ignore[no-untyped-call]
    return bytes(out)


def test_vectors_at_the_top_and_in_rows_become_numbers() -> None:
    args: dict[str, Any] = {
        "q": VECTOR,
        "k": 10,
        "rows": [{"embedding": VECTOR, "text": "x"}, {"text": "y"}],
    }
    got = quiet(args)
    assert type(got["q"]) is Numbers
    assert type(got["rows"][0]["embedding"]) is Numbers
    assert got == args  # the same values
    assert packed(got) == packed(args)
    assert "0.14285" not in repr(got)
    assert repr(got["q"]) == "<384 numbers>"
    assert args["q"] is VECTOR  # the caller's dict is left as it was
    assert type(args["rows"][0]["embedding"]) is list


def test_short_lists_and_other_values_are_passed_as_they_are() -> None:
    args = {"ids": ["a", "b"], "few": [0.5, 0.25], "ints": list(range(100)), "none": None}
    assert quiet(args) is args
    rows = {"rows": [{"term": "a", "n": 1}]}
    assert quiet(rows) is rows
