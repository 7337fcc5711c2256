"""Closure on write (``resolvers.closure``) on a recording executor: which rows are
single-valued, when the scope's lock is taken, and what a single-valued row is valid from."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from palimpsest.cypher.executor import Row, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.ontology import parse_ontology
from palimpsest.resolvers import closure
from palimpsest.resolvers.fact_input import prepare
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest.schema.fact_rows import FactRow
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

LOCKED = NOW + timedelta(seconds=5)  # the lock's time: never before the scope's last close
ONTOLOGY = "status: confirmed\n\n## person\nsingle: lives in\nsame: lives in = resides in\n"


def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
    assert statement.name == "LOCK_SCOPE_FACTS", statement.name
    return [{"now": LOCKED}]


def rows(*predicates: str, **changes: Any) -> list[FactRow]:
    drafts = [
        FactDraft(EntityRef("person", "ada"), p, None, "paris", **changes) for p in predicates
    ]
    return prepare(drafts)


RULES = closure.Rules(parse_ontology(ONTOLOGY))


async def test_nothing_single_valued_takes_no_lock_and_changes_no_row(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    given = rows("likes", "visited")
    for rules in (None, closure.Rules(None), RULES):
        now, out = await prepared(svc, rules, given)
        assert now is None
        assert out == given
    assert recorder.calls == []


async def test_a_single_valued_row_is_marked_and_valid_from_its_observation(
    tmp_path: Path,
) -> None:
    svc, recorder = services(answer, tmp_path)
    seen = NOW - timedelta(days=3)
    given = rows("resides in", "likes", observed_at=seen)
    now, [single, many] = await prepared(svc, RULES, given)
    assert now == LOCKED
    assert recorder.names() == ["LOCK_SCOPE_FACTS"]
    assert single.single_spellings == ("lives in", "resides in")
    assert single.valid_at == seen
    assert many == replace(given[1], single_spellings=None)
    assert given[0].valid_at is None  # the input rows are never changed


async def test_an_unobserved_single_valued_row_is_valid_from_the_lock_unless_it_ended_first(
    tmp_path: Path,
) -> None:
    svc, _ = services(answer, tmp_path)
    _, [row] = await prepared(svc, RULES, rows("lives in"))
    assert row.valid_at == LOCKED
    ended = rows("lives in", invalid_at=NOW)
    _, [row] = await prepared(svc, RULES, ended)
    assert row.valid_at is None  # a start after its end would be an empty interval


def test_a_draft_ontology_makes_nothing_single_valued() -> None:
    draft = closure.Rules(parse_ontology(ONTOLOGY.replace("confirmed", "draft")))
    assert draft.spellings(rows("lives in")[0]) is None
    assert RULES.spellings(rows("lives in")[0]) == frozenset({"lives in", "resides in"})


async def prepared(
    svc: Services, rules: closure.Rules | None, given: list[FactRow]
) -> tuple[datetime | None, list[FactRow]]:
    """``closure.prepare`` inside a write transaction of the caller's USER scope."""
    ref = resolve_scope(principal(), Scope.USER)
    return await svc.db.scoped(ref).write_tx(lambda tx: closure.prepare(tx, svc, rules, given))
