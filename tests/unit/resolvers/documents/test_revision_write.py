"""Writing a document revision (``resolvers.documents.revision_write``) on a recording
executor: which chunks a revision closes, edits and creates, what the document's head and
byte count become, and the refusals (a text without its embedding) that write nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.documents import markdown
from palimpsest.domain.documents import revisions as rev
from palimpsest.embedding import Vector
from palimpsest.errors import Conflict
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.documents.revision_write import (
    Written,
    lock,
    targets_of,
    write_revision,
)
from tests.unit.principals import principal
from tests.unit.recording import NOW, RecordingExecutor, services

DOC = "d" * 32
ROOT = "r" * 32
VECTOR = Vector([0.0, 1.0, 0.0, 0.0])

# The document now: a heading and a paragraph under it.
CURRENT: list[Row] = [
    {
        "id": "a" * 32,
        "type": "heading",
        "text": "# Title\n",
        "separator": "\n",
        "level": 1,
        "language": None,
        "parent_id": None,
        "seq": rev.SEQ_GAP,
    },
    {
        "id": "b" * 32,
        "type": "paragraph",
        "text": "Old words.\n",
        "separator": "",
        "level": None,
        "language": None,
        "parent_id": "a" * 32,
        "seq": 2 * rev.SEQ_GAP,
    },
]


def locked(**document: Any) -> Row:
    doc = {
        "id": DOC,
        "revision": 3,
        "preamble": "",
        "title": "Title",
        "path": "/p.md",
        "deleted_at": None,
        "quota_bytes": 20,
        **document,
    }
    return {"document": doc, "root_id": ROOT}


def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
    name = statement.name
    if name == "READ_CURRENT":
        return [dict(r) for r in CURRENT]
    if name == "LOCK_DOCUMENT":
        return [locked()] if params["id"] == DOC else []
    if name == "CLOSE_CHUNKS":
        return [{"indexed": []}]
    if name == "WRITE_PASSAGES":  # an edit removes its earlier passages
        return [{"written": 0}]
    if name == "RAISE_QUOTA_COUNTERS":
        return [{"fits": True}]
    if name == "READ_NEXT":
        return [{"a": "a" * 32, "b": "b" * 32}]
    return []


def targets(text: str) -> list[rev.Target]:
    return targets_of(markdown.parse(text))


async def written(
    tmp_path: Path, row: Row, wanted: list[rev.Target], vectors: dict[str, Vector], **options: Any
) -> tuple[Written | None, RecordingExecutor]:
    svc, recorder = services(answer, tmp_path)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: ScopedTx) -> Written | None:
        return await write_revision(
            tx,
            svc,
            principal(),
            row,
            wanted,
            vectors,
            options.pop("preamble", ""),
            options.pop("title", "Title"),
            "/p.md",
            **options,
        )

    return await svc.db.scoped(ref).write_tx(work), recorder


def call(recorder: RecordingExecutor, name: str) -> dict[str, Any]:
    [found] = [c.params for c in recorder.calls if c.name == name]
    return found


async def test_nothing_changed_writes_nothing(tmp_path: Path) -> None:
    got, recorder = await written(tmp_path, locked(), targets("# Title\n\nOld words.\n"), {})
    assert got is None
    assert recorder.names() == ["READ_CURRENT"]


async def test_an_edited_chunk_keeps_its_id_and_closes_its_old_version(tmp_path: Path) -> None:
    text = "# Title\n\nNew words.\n"
    got, recorder = await written(tmp_path, locked(), targets(text), {"New words.\n": VECTOR})
    assert got == Written(revision=4, changed=1)
    [edit] = call(recorder, "EDIT_CHUNKS")["rows"]
    assert edit["id"] == "b" * 32
    assert edit["old_seq"] == 2 * rev.SEQ_GAP
    assert edit["props"]["text"] == "New words.\n"
    assert edit["embedding"] == VECTOR
    assert "CREATE_CHUNKS" not in recorder.names()
    bump = call(recorder, "BUMP_DOCUMENT")
    assert (bump["revision"], bump["deleted"], bump["changed"]) == (4, False, 1)
    assert call(recorder, "STAMP_QUOTA_DOCUMENT_BYTES")["bytes"] == len(text.encode())
    # The counters grow by the document's new bytes and the two versions it ends.
    added = {a["counter"]: a["n"] for a in call(recorder, "RAISE_QUOTA_COUNTERS")["added"]}
    assert added[next(k for k in added if "version" in k)] == 2
    assert sum(added.values()) == 2  # 20 bytes before, 20 after: no byte counted


async def test_a_new_chunk_is_created_and_placed_under_its_heading(tmp_path: Path) -> None:
    text = "# Title\n\nOld words.\n\nMore.\n"
    got, recorder = await written(tmp_path, locked(), targets(text), {"More.\n": VECTOR})
    assert got is not None
    [created] = call(recorder, "CREATE_CHUNKS")["rows"]
    assert created["props"]["text"] == "More.\n"
    assert created["props"]["parent_id"] == "a" * 32
    relink = call(recorder, "RELINK")
    assert relink["root_id"] == ROOT
    assert ["b" * 32, created["id"]] in relink["link"]
    assert relink["unlink"] == []


async def test_a_new_text_without_its_embedding_conflicts(tmp_path: Path) -> None:
    with pytest.raises(Conflict, match="changed while this revision was prepared"):
        await written(tmp_path, locked(), targets("# Title\n\nOther.\n"), {})


async def test_a_deletion_closes_every_chunk_and_counts_no_bytes(tmp_path: Path) -> None:
    # The head stays (a front matter too), but a deleted document holds no bytes.
    got, recorder = await written(tmp_path, locked(), [], {}, deleted=True, preamble="---\n")
    assert got == Written(revision=4, changed=2)
    closed = call(recorder, "CLOSE_CHUNKS")["rows"]
    assert {c["id"] for c in closed} == {"a" * 32, "b" * 32}
    assert call(recorder, "BUMP_DOCUMENT")["deleted"] is True
    assert call(recorder, "STAMP_QUOTA_DOCUMENT_BYTES")["bytes"] == 0
    assert call(recorder, "RELINK")["unlink"] == [["a" * 32, "b" * 32]]


async def test_a_new_title_alone_is_a_revision(tmp_path: Path) -> None:
    got, recorder = await written(
        tmp_path, locked(), targets("# Title\n\nOld words.\n"), {}, title="Renamed"
    )
    assert got == Written(revision=4, changed=0)
    assert call(recorder, "BUMP_DOCUMENT")["title"] == "Renamed"


async def test_lock_answers_the_locked_row_or_none(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: ScopedTx) -> tuple[Row | None, Row | None]:
        return await lock(tx, svc, DOC), await lock(tx, svc, "e" * 32)

    found, missing = await svc.db.scoped(ref).write_tx(work)
    assert found is not None
    assert found["root_id"] == ROOT
    assert missing is None
    assert {c.params["now"] for c in recorder.calls} == {NOW}
