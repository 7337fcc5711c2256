"""Closure of single-valued facts (pure): any arrival order gives the same timeline."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.errors import InvalidArgument
from palimpsest.ontology import ontology_from_dict, parse_ontology
from palimpsest.ontology.reconcile import Stated, apply, closures, held_from, period_end


def at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def fact(key: str, obj: str, start: int, end: int | None = None, seen: int | None = None) -> Stated:
    stated = at(end) if end else None
    return Stated(key, ("city", obj), at(start), at(seen) if seen else None, key, stated, stated)


def load(order: list[Stated]) -> dict[str, datetime | None]:
    """Write the facts one by one as the server does: each write closes over what is stored."""
    stored: list[Stated] = []
    for f in order:
        stored = apply([*stored, f], closures([*stored, f]))
    return {f.id: f.end for f in stored}


def load_held(order: list[Stated]) -> dict[str, tuple[datetime, datetime | None]]:
    """``load`` with each fact's interval as reads see it: from ``held_from`` (only ever
    moved later, as the server writes it) to its end."""
    stored: list[Stated] = []
    held: dict[str, datetime] = {}
    for f in order:
        stored = apply([*stored, f], closures([*stored, f]))
        for key, start in held_from(stored).items():
            held[key] = max(held.get(key, start), start)
    return {f.id: (held.get(f.id, f.start), f.end) for f in stored}


def test_the_earlier_is_closed_where_the_later_starts_in_either_order() -> None:
    lisbon, porto = fact("l", "Lisbon", 2020), fact("p", "Porto", 2023)
    assert load([lisbon, porto]) == load([porto, lisbon]) == {"l": at(2023), "p": None}
    [c] = closures([porto, lisbon])
    assert (c.fact_id, c.by_id, c.invalid_at, c.same_start) == ("l", "p", at(2023), False)


def test_an_end_is_never_moved_later_and_same_objects_do_not_close() -> None:
    assert closures([fact("l", "Lisbon", 2020, end=2021), fact("p", "Porto", 2023)]) == []
    assert closures([fact("a", "Lisbon", 2020), fact("b", "Lisbon", 2022)]) == []


def test_equal_starts_keep_the_newer_observation() -> None:
    [c] = closures([fact("new", "Porto", 2023, seen=2024), fact("old", "Braga", 2023, seen=2023)])
    assert (c.fact_id, c.by_id, c.invalid_at, c.same_start) == ("old", "new", at(2023), True)


def test_of_equal_starts_the_one_its_writer_ends_sooner_is_the_earlier() -> None:
    # Two instants (not dates naming a period): the bounded one is the earlier, so it is
    # closed where the open one starts, in either order, even when observed later.
    noon = datetime(2017, 3, 1, 12, tzinfo=UTC)
    bounded = replace(fact("eu", "Brussels", 2017, end=2018, seen=2003), start=noon)
    open_ = replace(fact("x", "Paris", 2017), start=noon)
    assert load([bounded, open_]) == load([open_, bounded]) == {"eu": noon, "x": None}


def test_a_bounded_value_inside_a_dated_start_keeps_its_interval() -> None:
    # January to July, and another value "since 2019" (a year): in either order the bounded
    # one holds until July and the other from July on (docs/decisions/0009).
    jan, aug = datetime(2019, 1, 15, tzinfo=UTC), datetime(2019, 8, 1, tzinfo=UTC)
    bounded = Stated("b", ("city", "Faro"), jan, None, "b", aug, aug)
    open_ = fact("o", "Porto", 2019)
    for order in ([bounded, open_], [open_, bounded]):
        assert load_held(order) == {"b": (jan, aug), "o": (aug, None)}
    # A year-long bounded value ends where the next year starts: the open one holds from then.
    shorter, longer = fact("s", "Faro", 2017, end=2018), fact("l", "Porto", 2017, end=2020)
    assert load_held([longer, shorter]) == {"s": (at(2017), at(2018)), "l": (at(2018), at(2020))}
    # An end past the dated period is not inside it: the ordinary closure applies.
    late = Stated("late", ("city", "Faro"), jan, None, "late", at(2021), at(2021))
    assert load_held([open_, late]) == {"late": (jan, at(2021)), "o": (at(2019), jan)}


def test_a_start_not_stated_names_no_period() -> None:
    # Stored without a validAt (before its predicate was single-valued, or imported): its
    # start is its observation, which names no period even at midnight, so it is never held
    # (the store keeps no start to version): the ordinary rule settles the two.
    jan, aug = datetime(2019, 1, 15, tzinfo=UTC), datetime(2019, 8, 1, tzinfo=UTC)
    bounded = Stated("b", ("city", "Faro"), jan, None, "b", aug, aug)
    seen = replace(fact("o", "Porto", 2019), start_stated=False)
    assert held_from([bounded, seen]) == {}
    for order in ([bounded, seen], [seen, bounded]):
        assert load_held(order) == {"b": (jan, aug), "o": (at(2019), jan)}


def test_a_start_names_a_period_only_at_midnight() -> None:
    assert period_end(at(2019)) == at(2020)
    assert period_end(datetime(2019, 12, 1, tzinfo=UTC)) == at(2020)
    assert period_end(datetime(2019, 3, 1, tzinfo=UTC)) == datetime(2019, 4, 1, tzinfo=UTC)
    assert period_end(datetime(2019, 3, 5, tzinfo=UTC)) == datetime(2019, 3, 6, tzinfo=UTC)
    assert period_end(datetime(2019, 3, 5, 0, 0, 1, tzinfo=UTC)) is None
    assert period_end(datetime(9999, 1, 1, tzinfo=UTC)) == datetime.max.replace(tzinfo=UTC)


def dated(
    key: str, obj: str, start: int, end: int | None, seen: int | None, stated: bool = True
) -> Stated:
    """A fact in days of 2019-2021: starts at midnight (naming a day, a month or a year,
    when ``stated``), ends at any midnight, so that bounded values often end inside another's
    dated start."""
    base = datetime(2019, 1, 1, tzinfo=UTC)
    begin = base + timedelta(days=start)
    stop = begin + timedelta(days=end) if end else None
    return Stated(key, ("city", obj), begin, at(seen) if seen else None, key, stop, stop, stated)


facts_strategy = st.lists(
    st.builds(
        fact,
        key=st.uuids().map(str),
        obj=st.sampled_from(["Lisbon", "Porto", "Faro"]),
        start=st.integers(2000, 2010),
        end=st.none() | st.integers(2011, 2015),
        seen=st.none() | st.integers(2000, 2003),
    ),
    min_size=1,
    max_size=7,
    unique_by=lambda f: f.id,
)
dated_strategy = st.lists(
    st.builds(
        dated,
        key=st.uuids().map(str),
        obj=st.sampled_from(["Lisbon", "Porto", "Faro"]),
        start=st.sampled_from([0, 31, 59, 100, 365, 400]),
        end=st.none() | st.integers(1, 500),
        seen=st.none() | st.integers(2000, 2003),
        stated=st.booleans(),
    ),
    min_size=1,
    max_size=7,
    unique_by=lambda f: f.id,
)


@settings(max_examples=300, deadline=None)
@given(facts_strategy | dated_strategy, st.randoms(use_true_random=False))
def test_any_arrival_order_gives_the_same_timeline(facts: list[Stated], rnd: random.Random) -> None:
    shuffled = list(facts)
    rnd.shuffle(shuffled)
    timeline = load_held(facts)
    assert load_held(shuffled) == timeline == load_held(list(reversed(facts)))
    # One value at every instant: no two facts with different objects overlap as read.
    for a in facts:
        for b in facts:
            if a.object_key != b.object_key:
                (a_start, a_end), (b_start, b_end) = timeline[a.id], timeline[b.id]
                a_end, b_end = a_end or at(9999), b_end or at(9999)
                assert not (a_start < b_end and b_start < a_end), (a, b)


ONTOLOGY = """status: confirmed
## person
single: Lives   In, works at
same: lives in = resides in = dwells in
## employee
extends: person
single: reports to
"""


def test_single_and_same_lines_are_inherited_and_normalised() -> None:
    o = parse_ontology(ONTOLOGY)
    employee = o.types["employee"]
    assert employee.single == {"lives in", "works at", "reports to"}
    assert o.single_spellings("Employee", "RESIDES in") == frozenset(
        {"lives in", "resides in", "dwells in"}
    )
    assert o.single_spellings("person", "reports to") is None  # declared on the subtype only
    assert o.single_spellings("person", "visited") is None  # undeclared: many-valued
    draft = parse_ontology(ONTOLOGY.replace("confirmed", "draft"))
    assert draft.single_spellings("person", "lives in") is None  # a draft is not in force
    structured = ontology_from_dict(
        {
            "status": "confirmed",
            "types": [
                {"name": "person", "single": ["lives in"], "same": [["lives in", "resides in"]]}
            ],
        }
    )
    assert structured.single_spellings("person", "resides in") == frozenset(
        {"lives in", "resides in"}
    )


@pytest.mark.parametrize(
    "line",
    [
        "single:",
        "single: lives in,,works at",
        "same: lives in",
        "same: = resides in",
        "same: lives in = lives in",
        "same: lives in = resides in\nsame: works at = resides in",
    ],
)
def test_a_malformed_line_is_refused_naming_it(line: str) -> None:
    with pytest.raises(InvalidArgument, match=r"^line [34]: "):
        parse_ontology(f"status: confirmed\n## person\n{line}\n")


def test_the_structured_form_names_the_field() -> None:
    with pytest.raises(InvalidArgument, match=r"types\[0\]\.same\[0\]"):
        ontology_from_dict({"types": [{"name": "person", "same": [["lives in"]]}]})
    with pytest.raises(InvalidArgument, match=r"types\[0\]\.single\[0\]"):
        ontology_from_dict({"types": [{"name": "person", "single": [" "]}]})
