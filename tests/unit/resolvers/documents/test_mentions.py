"""``revision_mentions`` on a recording executor: an edit's mentions are copied to the version
in one statement; the chunk's are rewritten only when one moved or went, keeping every other
property; a mention without offsets stays; a restore asks for its version's, scoped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.documents import mentions as revision_mentions
from palimpsest.resolvers.documents.mentions import Edit
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal
from tests.unit.recording import RecordingExecutor, services

DOC = "d" * 32
CHUNK = "c" * 32
OLD = "Ada Lovelace met Bob Smith.\n"
NEW = "Yesterday Bob Smith met Grace.\n"


def copied(*mentions: tuple[str, dict[str, Any]]) -> Any:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "COPY_MENTIONS_TO_VERSIONS":
            return [{"chunk_id": CHUNK, "entity_id": e, "props": p} for e, p in mentions]
        return []

    return answer


async def carry(svc: Services, *edits: Edit) -> None:
    ref = resolve_scope(principal(), Scope.USER)
    await svc.db.scoped(ref).write_tx(lambda tx: revision_mentions.carry(tx, DOC, 3, list(edits)))


def replaced(recorder: RecordingExecutor) -> list[Any]:
    [call] = [c for c in recorder.calls if c.name == "REPLACE_MENTIONS"]
    return list(call.params["rows"])


async def test_moved_and_gone_mentions_rewrite_the_chunk(tmp_path: Path) -> None:
    ada = {"start": 0, "end": 12, "scope_key": "k"}
    bob = {"start": 17, "end": 26, "scope_key": "k", "merge_ids": ["m"], "merged_from": ["x"]}
    nowhere = {"scope_key": "k"}  # drawn without a place: nothing to follow
    svc, recorder = services(copied(("ada", ada), ("bob", bob), ("n", nowhere)), tmp_path)
    await carry(svc, Edit(CHUNK, OLD, NEW))
    assert recorder.names() == ["COPY_MENTIONS_TO_VERSIONS", "REPLACE_MENTIONS"]
    copy = recorder.calls[0].params
    assert (copy["id"], copy["revision"], copy["ids"]) == (DOC, 3, [CHUNK])
    assert copy["scope_key"] == resolve_scope(principal(), Scope.USER).scope_key
    assert replaced(recorder) == [
        {
            "id": CHUNK,
            "mentions": [
                {"entity_id": "bob", "props": {**bob, "start": 10, "end": 19}},
                {"entity_id": "n", "props": nowhere},
            ],
        }
    ]


async def test_nothing_moved_rewrites_nothing(tmp_path: Path) -> None:
    bob = {"start": 17, "end": 26}
    svc, recorder = services(copied(("bob", bob)), tmp_path)
    await carry(svc, Edit(CHUNK, OLD, OLD.replace("Smith.", "Smith!")))
    assert recorder.names() == ["COPY_MENTIONS_TO_VERSIONS"]
    # The same text (a move or a retype): the version gets the copy, the chunk keeps all.
    svc, recorder = services(copied(("bob", bob)), tmp_path)
    await carry(svc, Edit(CHUNK, OLD, OLD))
    assert recorder.names() == ["COPY_MENTIONS_TO_VERSIONS"]
    svc, recorder = services(copied(), tmp_path)
    await carry(svc)
    assert recorder.names() == []


async def test_a_restore_asks_for_its_versions_mentions(tmp_path: Path) -> None:
    svc, recorder = services(copied(), tmp_path)
    ref = resolve_scope(principal(), Scope.USER)
    await svc.db.scoped(ref).write_tx(
        lambda tx: revision_mentions.restore(tx, DOC, 1, [CHUNK, "b" * 32, CHUNK])
    )
    [call] = recorder.calls
    assert call.name == "RESTORE_VERSION_MENTIONS"
    assert (call.params["id"], call.params["restored"]) == (DOC, 1)
    assert call.params["ids"] == ["b" * 32, CHUNK]
    assert call.params["scope_key"] == ref.scope_key
