"""Document revisions (``resolvers.documents.revisions``) on a recording executor: a
revision read whole, at a revision or a time, with its own head; the history's pages; a
restore's writes; diffing two revisions (a revision over the line cap is refused before any
diff runs, naming the limit; a large diff runs in the offload pool, never on the event
loop)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.documents import revisions
from palimpsest.errors import InvalidArgument, NotFound, QuotaExceeded
from palimpsest.identity import Scope
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.services import Services
from tests.unit.offloads import RecordingOffload
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def nothing(statement: Statement, params: dict[str, Any]) -> list[Row]:
    return []


def with_texts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, texts: dict[int, str], **settings: Any
) -> tuple[Services, RecordingOffload]:
    async def markdown_of(svc: Services, who: Any, scope: Any, doc: str, revision: int) -> str:
        return texts[revision]

    monkeypatch.setattr(document_revisions, "_markdown_or_empty", markdown_of)
    svc, _ = services(nothing, tmp_path, **settings)
    offload = RecordingOffload()
    return dataclasses.replace(svc, offload=offload), offload


async def test_a_large_diff_runs_in_the_pool(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old = "".join(f"line {i}\n" for i in range(10_000))
    new = old.replace("line 5000\n", "line five thousand\n")
    svc, offload = with_texts(monkeypatch, tmp_path, {1: old, 2: new})
    got = await document_revisions.diff(svc, principal(), Scope.USER, "d" * 32, 1, 2)
    assert got == revisions.unified_diff(old, new, "revision 1", "revision 2")
    assert offload.pooled == ["palimpsest.domain.documents.revisions.unified_diff"]


async def test_a_revision_over_the_line_cap_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    long = "x\n" * 101
    texts = {1: "short\n", 2: long, 3: long[:-1]}
    svc, offload = with_texts(monkeypatch, tmp_path, texts, diff_max_lines=100)
    for a, b in ((1, 2), (2, 3), (1, 3)):
        with pytest.raises(QuotaExceeded) as caught:
            await document_revisions.diff(svc, principal(), Scope.USER, "d" * 32, a, b)
        assert caught.value.details == {"limit": "diffMaxLines", "allowed": 100, "lines": 101}
        assert "diffMaxLines" in caught.value.message
    assert offload.pooled == []
    # At the cap, it answers.
    texts[2] = "x\n" * 100
    assert await document_revisions.diff(svc, principal(), Scope.USER, "d" * 32, 1, 2)


# -- reading, paging and restoring revisions, on a document of three revisions ------------

DOC = "d" * 32
T1, T2, T3 = (NOW - timedelta(days=d) for d in (3, 2, 1))
HEAD_ID, BODY_ID = "a" * 32, "b" * 32


def revision_record(revision: int, at: datetime, deleted: bool = False) -> Row:
    return {
        "revision": revision,
        "created_at": at,
        "deleted": deleted,
        "changed_chunks": 1,
        "title": f"Title {revision}",
        "path": "/doc.md",
        "preamble": "",
        "tenant_id": "acme",
    }


def version(chunk_id: str, text: str, separator: str, seq: int) -> Row:
    return {
        "id": chunk_id,
        "document_id": DOC,
        "type": "paragraph",
        "text": text,
        "separator": separator,
        "level": None,
        "language": None,
        "revision": 1,
        "seq": seq,
        "observed_at": None,
        "created_at": T1,
        "updated_at": T1,
        "tenant_id": "acme",
    }


class History:
    """Revision 1 and 2 hold text, 3 is the deletion (or not, with ``live``)."""

    def __init__(self, *, live: bool = False, swept: int | None = None) -> None:
        self.records = [
            revision_record(1, T1),
            revision_record(2, T2),
            revision_record(3, T3, deleted=not live),
        ]
        self.swept = swept
        self.texts = {
            1: [("First.\n", "\n")],
            2: [("First.\n", "\n"), ("Second.\n", "")],
            3: [] if not live else [("Third.\n", "")],
        }

    def document(self) -> Row:
        return {
            "id": DOC,
            "title": "Title 3",
            "path": "/doc.md",
            "preamble": "",
            "created_at": T1,
            "tenant_id": "acme",
            "revision": 3,
            "deleted_at": None if self.texts[3] else T3,
            "history_swept_revision": self.swept,
            "history_swept_before": T2 if self.swept else None,
        }

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        name = statement.name
        if params.get("id") not in (DOC, None):
            return []
        if name == "LIST_REVISIONS":
            older = [r for r in reversed(self.records) if r["revision"] < params["before"]]
            return [{"document": self.document(), "revisions": older[: params["limit"]]}]
        if name == "REVISION_AT":
            at = [r["revision"] for r in self.records if r["created_at"] <= params["known_at"]]
            return [{"revision": max(at) if at else None}]
        if name == "READ_REVISION_CHUNKS":
            pieces = self.texts[params["revision"]]
            ids = [HEAD_ID, BODY_ID]
            return [
                {
                    "chunk": version(ids[i], text, sep, (i + 1) * 100),
                    "parent_id": None,
                    "embedding": [0.5, 0.5, 0.0, 0.0] if params["embeddings"] else None,
                }
                for i, (text, sep) in enumerate(pieces)
            ]
        if name == "SWEPT_MARK":
            doc = self.document()
            return [{k: doc[k] for k in ("history_swept_revision", "history_swept_before")}]
        if name == "LOCK_DOCUMENT":
            return [{"document": self.document(), "root_id": "r" * 32}]
        if name == "WRITE_PASSAGES":  # an edit removes its earlier passages
            return [{"written": 0}]
        if name == "RAISE_QUOTA_COUNTERS":
            return [{"fits": True}]
        if name == "CLOSE_CHUNKS":
            return [{"indexed": []}]
        return []


def reading(tmp_path: Path, history: History | None = None) -> tuple[Services, Any]:
    return services(history or History(), tmp_path)


async def test_a_revision_reads_as_it_was_with_its_own_head(tmp_path: Path) -> None:
    svc, _ = reading(tmp_path)
    doc = await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, 2, None)
    assert doc is not None
    assert doc.summary.revision == 2
    assert doc.summary.title == "Title 2"
    assert doc.summary.updated_at == T2
    assert [c.text for c in doc.chunks] == ["First.\n", "Second.\n"]
    assert [c.index for c in doc.chunks] == [0, 1]
    assert document_revisions.export(doc) == "First.\n\nSecond.\n"


async def test_a_time_reads_the_revision_current_then(tmp_path: Path) -> None:
    svc, _ = reading(tmp_path)
    between = T1 + timedelta(hours=1)
    doc = await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, None, between)
    assert doc is not None
    assert doc.summary.revision == 1
    before = T1 - timedelta(hours=1)
    assert (
        await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, None, before)
        is None
    )
    # At the deletion it reads as missing, as a deleted document does.
    assert (
        await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, None, NOW) is None
    )


async def test_a_revision_that_is_not_there_is_not_found(tmp_path: Path) -> None:
    svc, _ = reading(tmp_path)
    with pytest.raises(NotFound, match="the document has no revision 4"):
        await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, 4, None)
    with pytest.raises(NotFound, match="revision 3 is the document's deletion"):
        await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, 3, None)
    with pytest.raises(NotFound, match="document not found"):
        await document_revisions.read_revision(svc, principal(), Scope.USER, "e" * 32, 1, None)


async def test_a_swept_revision_is_refused_naming_the_horizon(tmp_path: Path) -> None:
    svc, _ = reading(tmp_path, History(swept=1))
    with pytest.raises(InvalidArgument, match="swept by its tenant's retention policy") as caught:
        await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, 1, None)
    assert caught.value.details["historySweptRevision"] == 1
    assert caught.value.details["historySweptBefore"] == T2.isoformat()
    assert await document_revisions.read_revision(svc, principal(), Scope.USER, DOC, 2, None)


async def test_a_deleted_revision_diffs_as_empty(tmp_path: Path) -> None:
    svc, _ = reading(tmp_path)
    got = await document_revisions.diff(svc, principal(), Scope.USER, DOC, 2, 3)
    assert got == revisions.unified_diff("First.\n\nSecond.\n", "", "revision 2", "revision 3")


async def test_history_pages_newest_first(tmp_path: Path) -> None:
    svc, _ = reading(tmp_path)
    first = await document_revisions.history(svc, principal(), Scope.USER, DOC, 2, None)
    assert [(r.revision, r.deleted) for r in first.items] == [(3, True), (2, False)]
    assert first.cursor is not None
    rest = await document_revisions.history(svc, principal(), Scope.USER, DOC, 2, first.cursor)
    assert [r.revision for r in rest.items] == [1]
    assert rest.cursor is None
    with pytest.raises(NotFound):
        await document_revisions.history(svc, principal(), Scope.USER, "e" * 32, 2, None)


async def test_a_restore_writes_the_old_texts_with_their_embeddings(tmp_path: Path) -> None:
    svc, recorder = reading(tmp_path)
    with pytest.raises(NotFound, match="document not found"):
        # The document stays deleted in this stub: the read after the restore finds none.
        await document_revisions.restore(svc, principal(), Scope.USER, DOC, 2)
    [created] = [c.params["rows"] for c in recorder.calls if c.name == "CREATE_CHUNKS"]
    assert [(r["id"], r["props"]["text"]) for r in created] == [
        (HEAD_ID, "First.\n"),
        (BODY_ID, "Second.\n"),
    ]
    assert {tuple(r["embedding"]) for r in created} == {(0.5, 0.5, 0.0, 0.0)}
    [bump] = [c.params for c in recorder.calls if c.name == "BUMP_DOCUMENT"]
    assert (bump["revision"], bump["title"], bump["deleted"]) == (4, "Title 2", False)
    [mentions] = [c.params for c in recorder.calls if c.name == "RESTORE_VERSION_MENTIONS"]
    assert (mentions["restored"], mentions["ids"]) == (2, [HEAD_ID, BODY_ID])


async def test_a_restore_of_a_deletion_or_a_missing_revision_is_refused(tmp_path: Path) -> None:
    svc, recorder = reading(tmp_path)
    with pytest.raises(NotFound, match="revision 3 is the document's deletion"):
        await document_revisions.restore(svc, principal(), Scope.USER, DOC, 3)
    with pytest.raises(NotFound, match="the document has no revision 9"):
        await document_revisions.restore(svc, principal(), Scope.USER, DOC, 9)
    assert "BUMP_DOCUMENT" not in recorder.names()


async def test_a_restore_embeds_passages_before_its_write_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.resolvers.documents import passages

    svc, recorder = services(History(), tmp_path, passage_max=8)
    embed = passages.embed
    during_writes: list[bool] = []

    async def watched(svc: Services, texts: Any) -> dict[str, list[dict[str, Any]]]:
        during_writes.append(any(c.write for c in recorder.calls))
        return await embed(svc, texts)

    monkeypatch.setattr(passages, "embed", watched)
    with pytest.raises(NotFound, match="document not found"):
        await document_revisions.restore(svc, principal(), Scope.USER, DOC, 2)
    assert "BUMP_DOCUMENT" in recorder.names()  # the restore was written
    assert during_writes == [False]  # the model ran once, before the document's lock
