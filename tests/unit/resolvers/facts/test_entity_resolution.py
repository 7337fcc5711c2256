"""One entity per name on write (``resolvers.facts.entity_resolution``), on a recording
executor: a stored entity's spelling wins, a batch's first spelling of a new name is every
later one's, and a literal value is only ever itself; and the likely duplicates it lists,
paged, with their reason and figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.facts import entity_resolution as entities
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest.schema.fact_rows import FactRow
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

# The row the statement ends with: the lock's time (the batch's keys not read here).
LOCKED_ROW: Row = {"i": None, "stored_keys": None, "now": NOW}


def stored(*known: tuple[str, str, str]) -> Any:
    """An answer knowing entities as (type, folded key, stored normalised name)."""

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        # The scope's fact lock is taken in the statement that resolves the names.
        assert statement.name == "LOCK_RESOLVE_ENTITIES", statement.name
        found: list[Row] = [
            {"i": n["i"], "norm": norm}
            for n in params["names"]
            for etype, key, norm in known
            if (n["type"], n["key"]) == (etype, key)
        ]
        return [*found, LOCKED_ROW]

    return answer


def fact(subject: str, obj: str | None = None, value: str | None = None) -> FactDraft:
    target = EntityRef("city", obj) if obj is not None else None
    return FactDraft(EntityRef("person", subject), "lives in", target, value)


async def resolved(svc: Services, drafts: list[FactDraft]) -> list[FactRow]:
    ref = resolve_scope(principal(), Scope.USER)
    rows = prepare(drafts)
    return await svc.db.scoped(ref).write_tx(lambda tx: entities.resolve(tx, svc, rows))


async def test_a_stored_entity_names_every_spelling_that_folds_to_it(tmp_path: Path) -> None:
    svc, recorder = services(stored(("person", "ada lovelace", "ada  lovelace")), tmp_path)
    [row] = await resolved(svc, [fact("ADA Lovelace!", "Paris")])
    assert row.subject_norm == "ada  lovelace"
    assert row.subject_name == "ADA Lovelace!"  # the written name is kept as given
    assert row.object_norm == "paris"
    assert recorder.names() == ["LOCK_RESOLVE_ENTITIES"]  # the lock with the names


async def test_a_new_name_takes_the_batchs_first_spelling(tmp_path: Path) -> None:
    svc, _ = services(stored(), tmp_path)
    first, second, other = await resolved(
        svc, [fact("Ada", "New York"), fact("ada", "new-york"), fact("Bob", "Paris")]
    )
    assert second.subject_norm == first.subject_norm == "ada"
    assert second.object_norm == first.object_norm == "new york"
    assert (other.subject_norm, other.object_norm) == ("bob", "paris")


async def test_a_literal_value_is_never_resolved(tmp_path: Path) -> None:
    svc, recorder = services(stored(("value", "35", "3,5")), tmp_path)
    [row] = await resolved(svc, [fact("Ada", value="3.5")])
    assert row.object_norm == "3.5"
    [names] = [c.params["names"] for c in recorder.calls if c.name == "LOCK_RESOLVE_ENTITIES"]
    assert [n["type"] for n in names] == ["person"]


# -- likely duplicates, paged ---------------------------------------------------------------


def named(entity_id: str, name: str, type_: str = "person", aliases: tuple[str, ...] = ()) -> Row:
    return {
        "entity": {
            "id": entity_id,
            "type": type_,
            "name": name,
            "normalized_name": name.lower(),
            "aliases": list(aliases),
            "alias_keys": list(aliases),
        }
    }


NAMES = [
    named("1" * 32, "Ada Lovelace"),
    named("2" * 32, "ada lovelace"),  # the same name, spelt otherwise
    named("3" * 32, "Ada Lovelaze"),  # one letter off
    named("4" * 32, "Countess", aliases=("ada lovelace",)),  # names her as an alias
    named("5" * 32, "Charles Babbage"),
    named("6" * 32, "Ada Lovelace", type_="ship"),  # another type: never her duplicate
]


def test_similarity_is_one_minus_the_edit_distance_over_the_longer() -> None:
    assert entities.similarity("", "") == 1.0
    assert entities.similarity("abcd", "abcd") == 1.0
    assert entities.similarity("abcde", "abcdx") == 0.8
    assert entities.similarity("ab", "abcdefghij") == pytest.approx(0.2)  # too far apart to count
    # At the length budget the names are measured, not passed: 3 of 15 is not a distance.
    assert entities.similarity("ada lovelace", "charles babbage") < entities.MIN_SIMILARITY


async def test_duplicates_are_found_by_name_alias_and_spelling_within_a_type(
    tmp_path: Path,
) -> None:
    svc, recorder = services(lambda s, p: NAMES, tmp_path)
    page = await entities.duplicates(svc, principal(), Scope.USER, 10, None)
    pairs = {(d.a.id[0], d.b.id[0], d.reason) for d in page.items}
    assert ("1", "2", "SAME_NAME") in pairs
    assert ("4", "1", "ALIAS") in pairs or ("1", "4", "ALIAS") in pairs
    assert any({a, b} == {"1", "3"} and r == "EDIT_DISTANCE" for a, b, r in pairs)
    assert not any("6" in (a, b) or "5" in (a, b) for a, b, _ in pairs)
    figures = {d.reason: d.figure for d in page.items}
    assert figures["SAME_NAME"] == 1.0
    assert 0.8 <= figures["EDIT_DISTANCE"] < 1.0
    [read] = recorder.calls
    assert read.params["cap"] == entities.MAX_SCAN


async def test_duplicates_page_in_a_stable_order(tmp_path: Path) -> None:
    svc, _ = services(lambda s, p: NAMES, tmp_path)
    whole = await entities.duplicates(svc, principal(), Scope.USER, 10, None)
    first = await entities.duplicates(svc, principal(), Scope.USER, 2, None)
    assert first.cursor is not None
    rest = await entities.duplicates(svc, principal(), Scope.USER, 10, first.cursor)
    ids = [(d.a.id, d.b.id) for d in whole.items]
    assert [(d.a.id, d.b.id) for d in first.items + rest.items] == ids
    assert rest.cursor is None
