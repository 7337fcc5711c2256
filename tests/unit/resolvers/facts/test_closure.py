"""Closure on write (``resolvers.facts.closure``): which rows are single-valued, the write's
time they take (the fact lock's, taken when the batch's names were resolved), what a
single-valued row is valid from, and (on the recording executor) the closures written for the
timelines a write touched."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from palimpsest.identity import Scope, resolve_scope
from palimpsest.ontology import parse_ontology
from palimpsest.resolvers.facts import closure
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest.schema.fact_rows import FactRow
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

LOCKED = NOW + timedelta(seconds=5)  # the lock's time: never before the scope's last close
ONTOLOGY = "status: confirmed\n\n## person\nsingle: lives in\nsame: lives in = resides in\n"


def rows(*predicates: str, **changes: Any) -> list[FactRow]:
    drafts = [
        FactDraft(EntityRef("person", "ada"), p, None, "paris", **changes) for p in predicates
    ]
    return prepare(drafts)


RULES = closure.Rules(parse_ontology(ONTOLOGY))


def test_nothing_single_valued_takes_no_time_and_changes_no_row() -> None:
    given = rows("likes", "visited")
    for rules in (None, closure.Rules(None), RULES):
        now, out = closure.prepare(rules, given, LOCKED)
        assert now is None
        assert out == given


def test_a_single_valued_row_is_marked_and_valid_from_its_observation() -> None:
    seen = NOW - timedelta(days=3)
    given = rows("resides in", "likes", observed_at=seen)
    now, [single, many] = closure.prepare(RULES, given, LOCKED)
    assert now == LOCKED
    assert single.single_spellings == ("lives in", "resides in")
    assert single.valid_at == seen
    assert many == replace(given[1], single_spellings=None)
    assert given[0].valid_at is None  # the input rows are never changed


def test_an_unobserved_single_valued_row_is_valid_from_the_lock_unless_it_ended_first() -> None:
    _, [row] = closure.prepare(RULES, rows("lives in"), LOCKED)
    assert row.valid_at == LOCKED
    ended = rows("lives in", invalid_at=NOW)
    _, [row] = closure.prepare(RULES, ended, LOCKED)
    assert row.valid_at is None  # a start after its end would be an empty interval


def test_a_draft_ontology_makes_nothing_single_valued() -> None:
    draft = closure.Rules(parse_ontology(ONTOLOGY.replace("confirmed", "draft")))
    assert draft.spellings(rows("lives in")[0]) is None
    assert RULES.spellings(rows("lives in")[0]) == frozenset({"lives in", "resides in"})


# -- writing the closures of the timelines a write touched, on the recording executor ------

T0 = NOW - timedelta(days=30)


def timeline_row(fact_id: str, city: str, start: Any, held_from: Any = None) -> dict[str, Any]:
    return {
        "group": 0,
        "id": fact_id,
        "object_type": "city",
        "object_norm": city,
        "start": start,
        "observed_at": start,
        "natural_key": f"k:{fact_id}",
        "end": None,
        "stated_end": closure.OPEN_END,
        "valid_at": start,
        "held_from": held_from,
    }


async def closed(tmp_path: Any, found: list[dict[str, Any]], keys: list[Any]) -> tuple[Any, Any]:
    def answer(statement: Any, params: dict[str, Any]) -> list[dict[str, Any]]:
        if statement.name == "FACT_TIMELINE_KEYS":
            return keys
        return found if statement.name == "CLOSURE_TIMELINES" else []

    svc, recorder = services(answer, tmp_path)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: Any) -> Any:
        return await closure.close_stored(tx, RULES, ["a" * 32, "b" * 32], NOW)

    return await svc.db.scoped(ref).write_tx(work), recorder


async def test_a_later_value_closes_the_earlier_one_at_its_start(tmp_path: Any) -> None:
    later = NOW - timedelta(days=10)
    found = [timeline_row("a" * 32, "paris", T0), timeline_row("b" * 32, "rome", later)]
    keys = [{"subject_type": "person", "subject_norm": "ada", "predicate": "resides in"}]
    done, recorder = await closed(tmp_path, found, keys)
    assert [(c.fact_id, c.by_id, c.invalid_at) for c in done] == [("a" * 32, "b" * 32, later)]
    [groups] = [c.params["groups"] for c in recorder.calls if c.name == "CLOSURE_TIMELINES"]
    # The spelling "resides in" is the single-valued "lives in": both spellings are one timeline.
    assert groups == [
        {
            "group": 0,
            "subject_type": "person",
            "subject_norm": "ada",
            "spellings": ["lives in", "resides in"],
        }
    ]
    [written] = [c.params for c in recorder.calls if c.name == "CLOSE_FACTS"]
    assert written["closures"] == [
        {"id": "a" * 32, "by_id": "b" * 32, "invalid_at": later, "reason": done[0].reason}
    ]


async def test_a_predicate_that_is_not_single_valued_closes_nothing(tmp_path: Any) -> None:
    keys = [{"subject_type": "person", "subject_norm": "ada", "predicate": "likes"}]
    done, recorder = await closed(tmp_path, [], keys)
    assert done == []
    assert recorder.names() == ["FACT_TIMELINE_KEYS"]


async def test_without_an_ontology_nothing_is_read(tmp_path: Any) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: Any) -> Any:
        return await closure.close_stored(tx, closure.Rules(None), ["a" * 32], NOW)

    assert await svc.db.scoped(ref).write_tx(work) == []
    assert recorder.calls == []
