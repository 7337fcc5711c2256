"""The engines a bench compares, as named on its command line."""

from __future__ import annotations

import pytest

from palimpsest_bench.engine_names import parse_engines


def test_engines_are_named_each_once_and_at_least_two() -> None:
    assert parse_engines("procedure,cypher") == ("procedure", "cypher")
    assert parse_engines(" cypher , procedure ") == ("cypher", "procedure")


@pytest.mark.parametrize(
    "text", ["", "procedure", "cypher,cypher", "procedure,lucene", "auto,cypher"]
)
def test_what_is_not_two_engines_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="engine"):
        parse_engines(text)
