"""Binding agent SQL on PostgreSQL (``sqlmem.postgres.binding``): JSON args to ``$n`` values,
refused when they do not fit the statement or a limit, and the guard around a query's
result values. Pure: no PostgreSQL is needed."""

from __future__ import annotations

import re

import pytest

from palimpsest.errors import InvalidArgument, QuotaExceeded
from palimpsest.sqlmem.postgres.binding import bind, guarded
from palimpsest.sqlmem.postgres.validator import MAX_LIKE_PATTERN_CHARS, check_query

POSITIONAL = check_query("SELECT a FROM t WHERE b = ? AND c LIKE ?")
NAMED = check_query("SELECT a FROM t WHERE b = :x AND c = :y AND d = :x")


def test_positional_values_bind_in_order() -> None:
    assert bind(POSITIONAL, [1, "a%"], 100) == [1, "a%"]


def test_named_values_bind_in_their_numbers_order() -> None:
    assert bind(NAMED, {"y": 2, "x": 1, "unused": 3}, 100) == [1, 2]


def test_a_statement_without_parameters_takes_an_empty_object() -> None:
    assert bind(check_query("SELECT 1"), {}, 100) == []


@pytest.mark.parametrize(
    ("checked", "bound", "message"),
    [
        (POSITIONAL, {"x": 1}, "the statement uses ? parameters: pass args as a list"),
        (POSITIONAL, [1], "the statement has 2 parameters; 1 were given"),
        (NAMED, [1, 2], "the statement uses :name parameters: pass args as an object"),
        (NAMED, {"x": 1}, "no value for parameter :y"),
    ],
)
def test_args_that_do_not_fit_the_statement_are_refused(
    checked: object, bound: object, message: str
) -> None:
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        bind(checked, bound, 100)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["é" * 51, b"x" * 101])  # 102 and 101 bytes
def test_a_value_over_the_cap_is_refused_naming_the_limit(value: str | bytes) -> None:
    with pytest.raises(QuotaExceeded) as caught:
        bind(POSITIONAL, [value, "a"], 100)
    assert caught.value.details["limit"] == "sqlMaxValueBytes"
    assert caught.value.details["maxValueBytes"] == 100
    assert bind(POSITIONAL, ["é" * 50, "a"], 100)[0] == "é" * 50  # 100 bytes: at the cap


def test_a_bound_pattern_over_the_cap_is_refused_a_plain_value_is_not() -> None:
    long = "x" * (MAX_LIKE_PATTERN_CHARS + 1)
    with pytest.raises(InvalidArgument, match=f"a LIKE pattern of {len(long)} characters"):
        bind(POSITIONAL, ["a", long], 10_000)
    assert bind(POSITIONAL, [long, "a"], 10_000) == [long, "a"]  # $1 is no pattern


def test_a_builder_over_the_cap_is_refused_before_it_runs() -> None:
    checked = check_query("SELECT repeat('ab', 60)")
    with pytest.raises(QuotaExceeded):
        bind(checked, [], 100)
    assert bind(checked, [], 120) == []


def test_the_guard_measures_each_column_by_its_type() -> None:
    # int4 (23) is fixed-size; text (25) is measured directly; jsonb (3802) as text.
    sql = guarded("SELECT 1", [("n", 23), ("t", 25), ("j", 3802)], 64)
    assert sql.startswith("SELECT q.c1, CASE WHEN octet_length(q.c2) <= 64 THEN q.c2 ")
    assert "WHEN sqlmem_admin.too_big(octet_length(q.c2)) THEN q.c2 END" in sql
    assert "CASE WHEN octet_length(q.c3::text) <= 64 THEN q.c3 " in sql
    assert sql.endswith("FROM (\nSELECT 1\n) AS q(c1, c2, c3)")


def test_a_query_without_columns_is_left_as_it_is() -> None:
    assert guarded("DELETE FROM t", [], 64) == "DELETE FROM t"
