"""Near-duplicate facts merge on write (``resolvers.dedup.merge_into_kept``) on a recording
executor: a row is pointed at the stored fact it duplicates (same folded object first, else
the closest one over the threshold), never when it names its own key or another time."""

from __future__ import annotations

from dataclasses import replace
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


async def banded(
    svc: Services, *drafts: FactDraft, threshold: float = 0.9, floor: float | None = 0.5
) -> tuple[list[FactRow], list[dedup.Close]]:
    rows = prepare(drafts)
    ref = resolve_scope(principal(), Scope.USER)
    return await svc.db.scoped(ref).write_tx(
        lambda tx: dedup.merge_and_band(tx, rows, threshold, frozenset(), floor)
    )


async def test_the_band_holds_close_facts_that_did_not_merge(tmp_path: Path) -> None:
    svc, _ = services(
        stored(
            candidate("k:close", "Acme", 0.8),
            candidate("k:far", "Bcme", 0.3),
            # The same object folded, at another time (so not merged): a repetition.
            candidate("k:same", "GLOBEX", 0.7, valid_at=NOW),
        ),
        tmp_path,
    )
    [row], band = await banded(svc, draft("Globex"))
    assert row.merged is False
    assert band == [dedup.Close(0, "id-k:close", 0.8)]
    # A row that merged pairs with nothing; no floor, no band.
    [merged_row], none = await banded(svc, draft("Acme"))
    assert merged_row.merged is True
    assert none == []
    _, off = await banded(svc, draft("Globex"), floor=None)
    assert off == []


async def test_one_fact_pairs_with_its_closest_few(tmp_path: Path) -> None:
    many = [candidate(f"k:{n}", f"Co{n}", 0.6 + n / 100) for n in range(8)]
    svc, _ = services(stored(*many), tmp_path)
    _, band = await banded(svc, draft("Globex"))
    assert [c.fact_id for c in band] == [f"id-k:{n}" for n in (7, 6, 5, 4, 3)]
    assert len(band) == dedup.MAX_PAIRS_PER_FACT


async def test_two_new_facts_of_one_batch_pair_with_each_other(tmp_path: Path) -> None:
    # Nothing stored: only the batch's own rows can be close to each other.
    svc, _ = services(stored(), tmp_path)
    ref = resolve_scope(principal(), Scope.USER)
    vectors = {"Paris": [1.0, 0.0], "Berlin": [0.8, 0.6], "Lyon": [0.0, 1.0]}
    rows = [
        replace(r, embedding=vectors[r.object_name])
        for r in prepare([draft("Paris"), draft("Berlin"), draft("Lyon")])
    ]
    merged, band = await svc.db.scoped(ref).write_tx(
        lambda tx: dedup.merge_and_band(tx, rows, 0.9, frozenset(), 0.5)
    )
    assert [r.merged for r in merged] == [False, False, False]
    # Berlin is close to the earlier Paris (0.8) and Lyon to the earlier Berlin (0.6); Lyon
    # and Paris (0.0) are not. The earlier row is named by its index, its id unknown yet.
    assert [(c.index, c.fact_id, c.other, round(c.cosine, 6)) for c in band] == [
        (1, "", 0, 0.8),
        (2, "", 1, 0.6),
    ]
    # Another subject is never paired.
    other = replace(rows[1], subject_norm="bob", index=3)
    _, apart = await svc.db.scoped(ref).write_tx(
        lambda tx: dedup.merge_and_band(tx, [rows[0], other], 0.9, frozenset(), 0.5)
    )
    assert apart == []
