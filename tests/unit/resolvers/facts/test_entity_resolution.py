"""One entity per name on write (``resolvers.entities.resolve``), on a recording executor:
a stored entity's spelling wins, a batch's first spelling of a new name is every later one's,
and a literal value is only ever itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
