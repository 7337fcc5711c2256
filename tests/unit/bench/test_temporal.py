"""The pure parts of the temporal evaluation: date rules, load planning and scoring.

Synthetic examples only: no evaluation data belongs in the repository.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from palimpsest.domain.time.timeparse import parse_time
from palimpsest_bench import temporal_data as t
from palimpsest_bench import yago_data as y


def holds(valid_at: str | None, invalid_at: str | None, as_of: str) -> bool:
    """The store's half-open rule, on wire strings, for checking the conversions."""
    at = parse_time(as_of, "asOf")
    start = parse_time(valid_at, "validAt") if valid_at else None
    end = parse_time(invalid_at, "invalidAt") if invalid_at else None
    return (start is None or start <= at) and (end is None or at < end)


def test_year_only_as_of_is_first_of_july() -> None:
    assert t.year_as_of(2021) == "2021-07-01"
    assert t.year_as_of(987) == "0987-07-01"
    assert t.situated_as_of("2021", "year") == "2021-07-01"
    assert t.situated_as_of("2021", "") == "2021-07-01"
    assert t.situated_as_of("2019-04-07", "day") == "2019-04-07"
    assert parse_time(t.situated_as_of("2018", "year"), "asOf") == datetime(2018, 7, 1, tzinfo=UTC)


def test_year_only_valid_at_is_first_of_january() -> None:
    # A value that starts in a year is current at that year's as-of; one that starts in
    # the autumn of that year is not yet.
    assert holds("2018", None, t.situated_as_of("2018", "year"))
    assert not holds("2018-09-01", None, t.situated_as_of("2018", "year"))
    # Half-open: the old value ends when the new one starts.
    assert not holds("1990", "2018", t.situated_as_of("2018", "year"))
    assert holds("1990", "2018", t.situated_as_of("2017", "year"))
    assert holds("2018-03-05", None, "2018-03-05")
    assert not holds("2016-11-24", "2018-03-05", "2018-03-05")


def test_situated_interval_keeps_order_and_widens_a_one_year_value() -> None:
    assert t.situated_interval("1990", "2018") == ("1990", "2018")
    assert t.situated_interval(None, "2021-03-25") == (None, "2021-03-25")
    assert t.situated_interval("2011", None) == ("2011", None)
    assert t.situated_interval("2017", "2017") == ("2017", "2018")
    with pytest.raises(ValueError, match="empty interval"):
        t.situated_interval("2018-05-01", "2018-05-01")
    with pytest.raises(ValueError, match="empty interval"):
        t.situated_interval("2019", "2018")


def test_yago_interval_rules() -> None:
    assert y.yago_interval("1952", "1964", "False") == ("1952", "1965")
    assert y.yago_interval("1787", "", "True") == ("1787", None)
    assert y.yago_interval("1787", "", True) == ("1787", None)
    assert y.yago_interval("", "1990", "False") == (None, "1991")
    assert y.yago_interval("", "", "False") is None  # unknown end: no validity at all
    assert y.yago_interval("1850", "", "False") is None
    valid_at, invalid_at = y.yago_interval("1952", "1964", "False") or (None, None)
    for year, expected in ((1951, False), (1952, True), (1964, True), (1965, False)):
        assert holds(valid_at, invalid_at, t.year_as_of(year)) is expected


def test_any_match_normalises_answers() -> None:
    assert t.any_match(["The Beatles"], ["beatles"])
    assert t.any_match(["Nov. 23, 2017", "x"], ["nov 23 2017"])
    assert t.any_match(["A", "B"], ["b"])
    assert not t.any_match([], ["a thing"])
    assert not t.any_match(["Truman"], ["Roosevelt"])


def test_only_gold_needs_every_prediction_to_be_gold() -> None:
    assert t.only_gold(["Truman"], ["truman", "Roosevelt"])
    assert not t.only_gold(["Truman", "Roosevelt"], ["Truman"])
    assert not t.only_gold([], ["Truman"])


def test_exact_set_match() -> None:
    assert y.exact_set(["Carolyn_Jones"], ["Carolyn_Jones"])
    assert y.exact_set(["B", "A"], ["A", "B"])
    assert y.exact_set([], [])  # nothing held, nothing predicted
    assert not y.exact_set(["A"], [])
    assert not y.exact_set(["A"], ["A", "B"])
    assert not y.exact_set(["A", "C"], ["A"])


def test_tally_by_type() -> None:
    tally = t.Tally()
    for kind, hit in (("start", True), ("start", False), ("orig", True)):
        tally.add(kind, hit)
    tally.skip("other")
    assert tally.n == 3
    assert tally.exact_match() == pytest.approx(2 / 3, abs=1e-4)
    assert tally.by_type() == {"orig": 1.0, "start": 0.5}
    assert tally.skipped == {"other": 1}
    assert t.Tally().exact_match() == 0.0


def row(tl: int, answers: list[str], valid: str | None, invalid: str | None) -> dict[str, object]:
    return {
        "question_id": "q1",
        "question": "who leads",
        "timeline": tl,
        "answers": answers,
        "valid_at": valid,
        "invalid_at": invalid,
    }


def test_plan_closes_older_values_by_supersession() -> None:
    plan = t.plan_situatedqa(
        [
            row(0, ["B"], "2015", None),  # newer first in the file: loaded second anyway
            row(0, ["A"], "2010", None),  # open and followed: the store must close it
            row(1, ["A"], "2010", "2015"),  # ends where its successor starts: closed too
            row(1, ["B"], "2015", None),
            row(2, ["C"], None, None),  # undated: never ordered, never closed
            row(3, ["X", "Y", "Y"], "2000", None),  # two answers, successor has one
            row(3, ["Z"], "2005-06-01", None),
            row(4, ["P"], "2001", "2003"),  # a gap before the next value: explicit end
            row(4, ["Q"], "2004", None),
            row(5, ["W"], "2017", "2017"),  # within 2017
            row(5, ["V"], "2017", None),
        ]
    )
    by_value: dict[str | None, list[t.Planned]] = {}
    for p in plan.facts:
        by_value.setdefault(p.draft.object_value, []).append(p)
    assert {p.draft.subject.name for p in plan.facts} == {"who leads"}
    assert {p.draft.predicate for p in plan.facts} == {"answer"}
    assert len(by_value["Y"]) == 1  # duplicate answers in one row collapse
    assert len({p.key for p in plan.facts}) == len(plan.facts)  # timelines stay distinct

    pairs = [(key_value(plan, a), key_value(plan, b)) for a, b in plan.supersessions]
    assert sorted(pairs) == [("A", "B"), ("A", "B"), ("X", "Z")]
    assert [p.draft.invalid_at for p in by_value["A"]] == [None, None]
    assert by_value["Y"][0].draft.invalid_at == at(2005, 6)  # no partner: explicit end
    assert by_value["P"][0].draft.invalid_at == at(2003)
    assert by_value["C"][0].draft.invalid_at is None
    assert by_value["W"][0].draft.invalid_at == at(2018)
    assert plan.dropped == 0
    # Older values first: undated, then by start; every supersession's old fact comes first.
    order = [p.key for p in plan.facts]
    assert plan.facts[0].draft.valid_at is None
    for old, new in plan.supersessions:
        assert order.index(old) < order.index(new)
    starts = [p.order for p in plan.facts]
    assert starts == sorted(starts)


def at(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def key_value(plan: t.Plan, key: str) -> str | None:
    return next(p.draft.object_value for p in plan.facts if p.key == key)


def test_plan_supersedes_a_chain_oldest_first_and_drops_empty_rows() -> None:
    plan = t.plan_situatedqa(
        [
            row(0, ["C"], "2020", None),
            row(0, ["B"], "2015", "2020"),
            row(0, ["A"], "2010", "2015"),
            row(0, ["E"], "2019-05-01", "2019-05-01"),
        ]
    )
    assert [(key_value(plan, a), key_value(plan, b)) for a, b in plan.supersessions] == [
        ("A", "B"),
        ("B", "C"),
    ]
    assert plan.dropped == 1
    assert [p.draft.object_value for p in plan.facts] == ["A", "B", "C"]


def test_plan_yago_orders_by_start_and_flags_unknown_validity() -> None:
    rows = [
        {"subject": "Ann", "relation": "worksAt", "object": "Lab_B", "start_year": "1990",
         "end_year": "", "end_open": "True"},
        {"subject": "Ann", "relation": "worksAt", "object": "Lab_A", "start_year": "1980",
         "end_year": "1989", "end_open": "False"},
        {"subject": "Bob", "relation": "owns", "object": "Boat", "start_year": "",
         "end_year": "", "end_open": "False"},
    ]  # fmt: skip
    drafts, unknown = y.plan_yago(rows)
    assert [(d.object.name if d.object else None) for d in drafts] == ["Boat", "Lab_A", "Lab_B"]
    assert [(d.valid_at, d.invalid_at) for d in drafts] == [
        (None, None),
        (at(1980), at(1990)),
        (at(1990), None),
    ]
    assert all(d.object_value is None and d.subject.type == "entity" for d in drafts)
    assert unknown == {("bob", "owns")}
