"""The namespaced-key layout and the value filters of palimpsest/domain/notes/namespaces.py."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.domain.notes import namespaces as ns
from palimpsest.domain.notes import values
from palimpsest.errors import InvalidArgument

labels = st.text(min_size=1, max_size=12).filter(lambda s: "." not in s)
namespaces = st.lists(labels, min_size=1, max_size=5).map(tuple)


@given(namespaces, st.text(max_size=12))
def test_every_namespace_and_key_round_trip(namespace: tuple[str, ...], name: str) -> None:
    key = ns.note_key(namespace, name)
    assert ns.split_key(key) == (namespace, name)
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in key)


@given(namespaces, namespaces)
def test_a_prefix_stops_at_a_label_boundary(
    namespace: tuple[str, ...], prefix: tuple[str, ...]
) -> None:
    starts = namespace[: len(prefix)] == prefix
    assert ns.note_key(namespace, "k").startswith(ns.namespace_prefix(prefix)) == starts


def test_other_keys_are_not_namespaced() -> None:
    assert ns.split_key("profile/name") is None
    assert ns.split_key("ns/only-a-path") is None


@pytest.mark.parametrize(
    ("value", "filter_", "expected"),
    [
        ({"a": 1}, {"a": 1}, True),
        ({"a": 1}, {"a": True}, False),
        ({"a": True}, {"a": 1}, False),
        ({"a": {"b": "x"}}, {"a.b": "x"}, True),
        ({"a": {"b": "x", "c": 2}}, {"a": {"b": "x"}}, True),
        ({"t": ["x", "y"]}, {"t": ["x"]}, False),
        ({"n": 5}, {"n": {"$gt": 4, "$lte": 5}}, True),
        ({"n": 5}, {"n": {"$ne": 5}}, False),
        ({"n": 5}, {"n": {"$lt": "Infinity"}}, True),
        ({"n": 5}, {"n": {"$gt": "-Infinity"}}, True),
        ({"n": 5}, {"n": {"$eq": "NaN"}}, False),
        ({"n": "5"}, {"n": {"$gt": 1}}, False),
        ({}, {"n": {"$ne": 1}}, True),
    ],
)
def test_filters_compare_like_langgraphs(value: Any, filter_: Any, expected: bool) -> None:
    assert ns.passes(value, ns.check_filter(filter_)) is expected


@pytest.mark.parametrize("filter_", [{"a'b": 1}, {"": 1}, {"a..b": 1}, {"a": {"$regex": "x"}}, [1]])
def test_bad_filters_are_refused(filter_: Any) -> None:
    with pytest.raises(InvalidArgument):
        ns.check_filter(filter_)


def test_wildcards_match_one_label() -> None:
    assert ns.matches(("a", "b", "c"), ("a", "*"), ("c",))
    assert not ns.matches(("a",), ("a", "*"), ())
    assert ns.literal_head(("a", "*", "c")) == ("a",)
    assert math.isinf(ns._NON_FINITE["Infinity"])


scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text()
parts = st.sampled_from(["a", "b", "a-b", "1"])
documents: st.SearchStrategy[Any] = st.recursive(
    scalars | st.just([]), lambda inner: st.dictionaries(parts, inner, max_size=3), max_leaves=8
)


@given(st.dictionaries(parts, documents, max_size=3), st.dictionaries(parts, scalars, max_size=2))
def test_the_prefilter_never_drops_a_note_that_passes(value: Any, filter_: Any) -> None:
    try:
        stored = values.encode(value)
    except InvalidArgument:
        return  # not storable, so never stored
    if ns.passes(value, ns.check_filter(filter_)):
        assert all(n in stored for n in ns.needles(ns.check_filter(filter_)))


def test_needles_are_the_canonical_text_of_scalar_equalities() -> None:
    wanted = {"user.name": "O'Brien", "on": True, "n": 3, "x": 1.5, "t": ["a"], "r": {"$gt": 1}}
    assert ns.needles(ns.check_filter(wanted)) == ['"name":"O\'Brien"', '"on":true', '"n":3']


@pytest.mark.parametrize("stored", [1e16, -1e16, 1e22, 2.0**60, 1e15, 123.0])
def test_an_integer_equality_finds_a_stored_float_of_the_same_value(stored: float) -> None:
    wanted = {"x": int(stored)}
    assert ns.passes({"x": stored}, wanted)
    text = values.encode({"x": stored})
    assert all(n in text for n in ns.needles(ns.check_filter(wanted))), text


def test_every_namespace_a_key_can_hold_is_searchable() -> None:
    # "ns/" + "a/" per label + "/k": the deepest namespace a key holds, and one label more.
    deepest = ("a",) * ((values.MAX_KEY_BYTES - 5) // 2)
    values.check_key(ns.note_key(deepest, "k"))
    with pytest.raises(InvalidArgument):
        values.check_key(ns.note_key((*deepest, "a"), "k"))
    assert ns.check_labels(deepest) == deepest
    assert ns.check_labels(("a",) * 65) == ("a",) * 65
