"""Bookmarks between requests: what a header may hold, and how a request's set moves on."""

from __future__ import annotations

import pytest

from palimpsest.cypher.causal import MAX_BOOKMARKS, Causal, current, parse, request_scope
from palimpsest.errors import InvalidArgument


def test_a_header_is_parsed_into_bookmarks() -> None:
    assert parse(None) == set()
    assert parse("  ") == set()
    assert parse("FB:abc=, FB:def") == {"FB:abc=", "FB:def"}


@pytest.mark.parametrize(
    "raw",
    ["FB:a b", "FB:a;DROP", "x" * 513, ",".join(["FB:a"] * (MAX_BOOKMARKS + 1)), "FB:a,,FB:b"],
)
def test_anything_neo4j_would_not_have_issued_is_refused(raw: str) -> None:
    with pytest.raises(InvalidArgument, match="x-palimpsest-bookmark"):
        parse(raw)


def test_a_transaction_supersedes_the_bookmarks_it_started_after() -> None:
    causal = Causal({"FB:given", "FB:other"})
    causal.after(frozenset({"FB:given"}), frozenset({"FB:made"}))
    assert causal.seen == {"FB:other", "FB:made"}
    causal.after(frozenset({"FB:other", "FB:made"}), frozenset())  # nothing new: kept
    assert causal.header() == "FB:made,FB:other"
    assert Causal().header() is None


def test_the_scope_is_per_request() -> None:
    assert current() is None
    with request_scope({"FB:x"}) as causal:
        assert current() is causal
    assert current() is None
