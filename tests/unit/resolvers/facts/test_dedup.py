"""Near-duplicate facts merge on write (``resolvers.dedup.merge_into_kept``) on a recording
executor: a row is pointed at the stored fact it duplicates (same folded object first, else
the closest one over the threshold), never when it names its own key or another time."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.facts import dedup
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest.schema.fact_rows import FactRow
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def candidate(key: str, obj: str, cosine: float, **row: Any) -> Row:
    return {
        "index": 0,
        "id": "id-" + key,
        "natural_key": key,
        "predicate": "works at",
        "object_type": "company",
        "object_norm": obj.lower(),
        "object_name": obj,
        "valid_at": None,
        "cosine": cosine,
        **row,
    }


def stored(*candidates: Row) -> Any:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        assert statement.name == "NEAR_DUPLICATE_FACTS", statement.name
        return list(candidates)

    return answer


async def merged(svc: Services, *drafts: FactDraft, threshold: float = 0.9) -> list[FactRow]:
    rows = prepare(drafts)
    ref = resolve_scope(principal(), Scope.USER)
    return await svc.db.scoped(ref).write_tx(lambda tx: dedup.merge_into_kept(tx, rows, threshold))


def draft(obj: str, **changes: Any) -> FactDraft:
    return FactDraft(
        EntityRef("person", "ada"), "works at", EntityRef("company", obj), None, **changes
    )


async def test_a_row_becomes_the_stored_fact_with_the_same_folded_object(tmp_path: Path) -> None:
    svc, recorder = services(
        stored(candidate("k:far", "Acme", 0.99), candidate("k:same", "INITECH!", 0.5)), tmp_path
    )
    [row] = await merged(svc, draft("Initech"))
    assert row.merged is True
    assert (row.natural_key, row.object_name) == ("k:same", "INITECH!")
    [call] = recorder.calls
    [asked] = call.params["facts"]  # the stored facts of this subject and predicate
    assert (asked["subject_norm"], asked["predicate_key"]) == ("ada", "works at")


async def test_else_the_closest_over_the_threshold_and_none_under_it(tmp_path: Path) -> None:
    svc, _ = services(
        stored(candidate("k:a", "Acme", 0.95), candidate("k:b", "Bcme", 0.97)), tmp_path
    )
    [row] = await merged(svc, draft("Initech"))
    assert row.natural_key == "k:b"
    [kept] = await merged(svc, draft("Initech"), threshold=0.98)
    assert kept.merged is False
    assert kept.object_name == "Initech"


async def test_another_time_or_a_given_key_is_never_merged(tmp_path: Path) -> None:
    later = NOW + timedelta(days=1)
    svc, recorder = services(stored(candidate("k:same", "Initech", 1.0, valid_at=later)), tmp_path)
    [row] = await merged(svc, draft("Initech"))
    assert row.merged is False
    svc, recorder = services(stored(candidate("k:same", "Initech", 1.0)), tmp_path)
    [own] = await merged(svc, draft("Initech", natural_key="k:mine"))
    assert (own.merged, own.natural_key) == (False, "k:mine")
    assert recorder.calls == []  # nothing to compare: no statement at all
    first, named = await merged(svc, draft("Initech"), draft("Initech", natural_key="k:mine"))
    assert (first.merged, first.natural_key) == (True, "k:same")
    assert (named.merged, named.natural_key) == (False, "k:mine")  # not even with the batch
