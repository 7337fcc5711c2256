"""``entity_merge`` (``resolvers.entity_merge``) on a recording executor: bad merges refused
before any write, a merge under the fact lock adding only new names as aliases, and an unmerge
refused when what it would restore has moved on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Conflict, InvalidArgument, NotFound
from palimpsest.identity import Scope
from palimpsest.resolvers.entities import merging as entity_merge
from tests.unit.principals import principal
from tests.unit.recording import NOW, Answer, services

KEEP, ADA, LOVELACE, ACME = "a" * 32, "b" * 32, "c" * 32, "d" * 32
ENTITIES: dict[str, dict[str, Any]] = {
    KEEP: {"name": "Ada Lovelace", "type": "person", "aliases": ["Countess"]},
    ADA: {"name": "ada lovelace", "type": "person", "aliases": ["A. Lovelace"]},
    LOVELACE: {"name": "Lady Lovelace", "type": "person", "aliases": None},
    ACME: {"name": "Acme", "type": "organisation", "aliases": None},
}


def entity(id_: str) -> Row:
    e = ENTITIES[id_]
    return {"id": id_, "normalized_name": e["name"].lower(), "tenant_id": "acme", **e}


def database(merge_row: Row | None = None) -> Answer:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "LOCK_SCOPE_FACTS":
            return [{"now": NOW}]
        if statement.name == "MERGE_ENTITIES_BY_ID":
            return [{"entity": entity(i)} for i in params["ids"] if i in ENTITIES]
        if statement.name in {"MOVE_FACTS", "MOVE_MENTIONS"}:
            return [{"moved": 2}]
        if statement.name == "LOCK_MERGE":
            return [merge_row] if merge_row else []
        return []

    return answer


@pytest.mark.parametrize(
    ("merge_ids", "message"),
    [
        ([], "1-50"),
        ([ADA] * 2, "twice"),
        ([KEEP], "into itself"),
        ([f"{i:032x}" for i in range(entity_merge.MAX_MERGE + 1)], "1-50"),
    ],
)
async def test_a_bad_merge_is_refused_before_any_statement(
    tmp_path: Path, merge_ids: list[str], message: str
) -> None:
    svc, recorder = services(database(), tmp_path)
    with pytest.raises(InvalidArgument, match=message):
        await entity_merge.merge(svc, principal(), Scope.USER, KEEP, merge_ids)
    assert recorder.calls == []


async def test_a_merge_runs_under_the_fact_lock_and_adds_only_new_names(tmp_path: Path) -> None:
    svc, recorder = services(database(), tmp_path)
    _, merge_id = await entity_merge.merge(svc, principal(), Scope.USER, KEEP, [ADA, LOVELACE])
    write = recorder.transactions[0]
    assert write[0] == "LOCK_SCOPE_FACTS"
    assert write[-1] == "RECORD_MERGE"
    (record,) = [c for c in recorder.calls if c.name == "RECORD_MERGE"]
    # "ada lovelace" is the kept name in other case: not a new alias.
    assert record.params["added_aliases"] == ["A. Lovelace", "Lady Lovelace"]
    assert record.params["aliases"] == ["Countess", "A. Lovelace", "Lady Lovelace"]
    assert (record.params["facts_moved"], record.params["merge_id"]) == (2, merge_id)


async def test_entities_of_two_types_do_not_merge(tmp_path: Path) -> None:
    svc, recorder = services(database(), tmp_path)
    with pytest.raises(InvalidArgument, match="one type"):
        await entity_merge.merge(svc, principal(), Scope.USER, KEEP, [ACME])
    assert "MOVE_FACTS" not in recorder.names()


async def test_an_entity_the_scope_lacks_answers_not_found(tmp_path: Path) -> None:
    svc, recorder = services(database(), tmp_path)
    with pytest.raises(NotFound):
        await entity_merge.merge(svc, principal(), Scope.USER, KEEP, ["e" * 32])
    assert "MOVE_FACTS" not in recorder.names()


def merge_row(**changes: Any) -> Row:
    record = {
        "keep_id": KEEP,
        "merged_ids": [ADA],
        "added_aliases": ["A. Lovelace"],
        "undone_at": None,
    }
    return {
        "merge": record,
        "kept": True,
        "taken": False,
        "kept_aliases": ["Countess", "A. Lovelace"],
        **changes,
    }


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (merge_row(merge={"undone_at": NOW}), "already undone"),
        (merge_row(kept=False), "was itself merged"),
        (merge_row(taken=True), "since been written"),
    ],
)
async def test_an_unmerge_that_would_restore_a_moved_state_is_refused(
    tmp_path: Path, row: Row, message: str
) -> None:
    svc, recorder = services(database(row), tmp_path)
    with pytest.raises(Conflict, match=message):
        await entity_merge.unmerge(svc, principal(), Scope.USER, "f" * 32)
    assert "RESTORE_ENTITIES" not in recorder.names()


async def test_an_unmerge_gives_back_the_kept_entity_its_own_aliases(tmp_path: Path) -> None:
    svc, recorder = services(database(merge_row()), tmp_path)
    restored = await entity_merge.unmerge(svc, principal(), Scope.USER, "f" * 32)
    assert [e.id for e in restored] == [KEEP, ADA]
    (undo,) = [c for c in recorder.calls if c.name == "UNDO_MERGE"]
    assert undo.params["aliases"] == ["Countess"]
    names = recorder.transactions[0]
    assert names.index("RESTORE_MENTIONS") < names.index("UNDO_MERGE")
