"""Closure on write (``resolvers.closure``): which rows are single-valued, the write's time
they take (the fact lock's, taken when the batch's names were resolved), and what a
single-valued row is valid from."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from palimpsest.ontology import parse_ontology
from palimpsest.resolvers.facts import closure
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest.schema.fact_rows import FactRow
from tests.unit.recording import NOW

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
