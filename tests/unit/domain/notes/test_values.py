from __future__ import annotations

import pytest

from palimpsest.domain.notes import values
from palimpsest.errors import Conflict, InvalidArgument


def test_encode_is_canonical_and_refuses_what_json_cannot_hold() -> None:
    assert values.encode({"b": 1, "a": [True, None]}) == '{"a":[true,null],"b":1}'
    for bad in (float("nan"), float("inf"), 2**64, {1: "x"}, {"s": {1, 2}}):
        with pytest.raises(InvalidArgument):
            values.encode(bad)
    deep: object = 1
    for _ in range(values.MAX_DEPTH + 2):
        deep = [deep]
    with pytest.raises(InvalidArgument, match="deeper"):
        values.encode(deep)


@pytest.mark.parametrize("key", ["", "a\nb", "x" * 513, "tab\there"])
def test_bad_keys(key: str) -> None:
    with pytest.raises(InvalidArgument):
        values.check_key(key)


def test_increment() -> None:
    assert values.increment(None, 1) == 1
    assert values.increment(41, 1.0) == 42
    assert isinstance(values.increment(41, 1.0), int)
    assert values.increment(1, 0.5) == 1.5
    for wrong in ("7", True, [1], {"n": 1}):
        with pytest.raises(Conflict):
            values.increment(wrong, 1)


def test_deep_merge_merges_objects_and_replaces_the_rest() -> None:
    assert values.deep_merge({"a": {"c": 2}, "l": [1]}, {"a": {"b": 1}, "l": [2]}) == {
        "a": {"b": 1, "c": 2},
        "l": [2],
    }
    assert values.deep_merge(None, {"x": 1}) == {"x": 1}
    assert values.deep_merge({"a": 1}, {"a": {"b": 2}}) == {"a": {"b": 2}}
    with pytest.raises(Conflict):
        values.deep_merge([1], {"x": 1})
    with pytest.raises(InvalidArgument):
        values.deep_merge({}, [1])


def test_append_dedupe_uses_canonical_equality() -> None:
    appended, items = values.append_dedupe(None, {"a": 1, "b": 2})
    assert appended
    assert items == [{"a": 1, "b": 2}]
    appended, items = values.append_dedupe(items, {"b": 2, "a": 1})
    assert not appended
    assert items == [{"a": 1, "b": 2}]
    with pytest.raises(Conflict):
        values.append_dedupe("text", 1)


def test_bounded_append_trims_oldest() -> None:
    dropped, items = values.bounded_append(["a", "b"], "c", 2)
    assert (dropped, items) == (1, ["b", "c"])
    for limit in (0, values.MAX_BOUNDED_LIMIT + 1):
        with pytest.raises(InvalidArgument):
            values.bounded_append([], "x", limit)
