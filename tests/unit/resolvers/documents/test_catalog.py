"""The documents plane's reads and edits (``resolvers.documents.catalog``) on a recording
executor: the records mapped to documents and chunks, the page's cursor, a chunk edit's
revision check and what it writes, and the refusals that write nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Conflict, InvalidArgument, NotFound
from palimpsest.identity import Scope
from palimpsest.resolvers.documents import catalog
from tests.unit.principals import principal
from tests.unit.recording import NOW, RecordingExecutor, services

DOC = "d" * 32
HEAD = "a" * 32
BODY = "b" * 32


def document(doc_id: str = DOC, **changes: Any) -> Row:
    return {
        "id": doc_id,
        "title": "Notes",
        "path": "/notes.md",
        "preamble": "---\nx: 1\n---\n",
        "deleted_at": None,
        "created_at": NOW,
        "updated_at": NOW,
        "tenant_id": "acme",
        "agent_name": "planner",
        "revision": 2,
        **changes,
    }


def chunk(chunk_id: str, text: str, separator: str, index: int) -> Row:
    return {
        "id": chunk_id,
        "document_id": DOC,
        "type": "heading" if index == 0 else "paragraph",
        "text": text,
        "separator": separator,
        "level": 1 if index == 0 else None,
        "language": None,
        "position": 0,
        "index": index,
        "revision": 1,
        "start_line": index * 2,
        "end_line": index * 2 + 1,
        "start_char": 0,
        "end_char": len(text),
        "observed_at": None,
        "created_at": NOW,
        "updated_at": NOW,
        "tenant_id": "acme",
    }


CHUNKS: list[Row] = [
    {"chunk": chunk(HEAD, "# Notes\n", "\n", 0), "parent_id": None},
    {"chunk": chunk(BODY, "Some text.\n", "", 1), "parent_id": HEAD},
]


class Store:
    def __init__(self, *, fresh: bool = True, docs: int = 1) -> None:
        self.fresh = fresh
        self.docs = [document(f"{i:032d}") for i in range(docs)]

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        name = statement.name
        if name == "LIST_DOCUMENTS":
            after = [d for d in self.docs if d["id"] > params["after"]]
            return [{"document": d, "chunk_count": 2} for d in after[: params["limit"]]]
        if name == "GET_DOCUMENT":
            return [{"document": document()}] if params["id"] == DOC else []
        if name == "GET_DOCUMENT_CHUNKS":
            return CHUNKS if params["id"] == DOC else []
        if name == "GET_CHUNK":
            found = [r for r in CHUNKS if r["chunk"]["id"] == params["id"]]
            return [{**found[0]}] if found else []
        if name == "LOCK_CHUNK_DOCUMENT":
            known = params["id"] in (HEAD, BODY)
            return [{"document": document(), "root_id": "r" * 32}] if known else []
        if name == "UPDATE_CHUNK":
            revision = params["revision"] + 1 if self.fresh else 7
            return [{"fresh": self.fresh, "revision": revision, "old_text": "Some text.\n"}]
        if name == "WRITE_PASSAGES":  # an edit removes its earlier passages
            return [{"written": 0}]
        if name == "RAISE_QUOTA_COUNTERS":
            return [{"fits": True}]
        return []


def store(tmp_path: Path, answer: Store | None = None) -> tuple[Any, RecordingExecutor]:
    return services(answer or Store(), tmp_path)


async def test_a_document_is_read_with_its_chunks_in_order(tmp_path: Path) -> None:
    svc, _ = store(tmp_path)
    doc = await catalog.get_document(svc, principal(), Scope.USER, DOC)
    assert doc is not None
    assert doc.summary.id == DOC
    assert (doc.summary.chunk_count, doc.summary.revision) == (2, 2)
    assert [c.id for c in doc.chunks] == [HEAD, BODY]
    assert doc.chunks[1].parent_id == HEAD
    assert doc.separators == ["\n", ""]
    assert catalog.export_markdown(doc) == "---\nx: 1\n---\n# Notes\n\nSome text.\n"


async def test_a_missing_document_or_chunk_reads_as_none(tmp_path: Path) -> None:
    svc, _ = store(tmp_path)
    assert await catalog.get_document(svc, principal(), Scope.USER, "e" * 32) is None
    assert await catalog.get_chunk(svc, principal(), Scope.USER, "e" * 32) is None


async def test_a_malformed_id_is_refused_before_any_read(tmp_path: Path) -> None:
    svc, recorder = store(tmp_path)
    with pytest.raises(InvalidArgument):
        await catalog.get_chunk(svc, principal(), Scope.USER, "not-an-id")
    assert recorder.calls == []


async def test_the_writers_stamps_are_shown_to_the_writers_tenant(tmp_path: Path) -> None:
    svc, _ = store(tmp_path)
    own = await catalog.get_document(svc, principal(), Scope.USER, DOC)
    assert own is not None
    assert own.summary.provenance.agent_name == "planner"
    assert own.summary.provenance.tenant_id == "acme"


async def test_a_page_of_documents_has_a_cursor_when_there_are_more(tmp_path: Path) -> None:
    svc, recorder = store(tmp_path, Store(docs=3))
    first = await catalog.list_documents(svc, principal(), Scope.USER, "/", 2, None)
    assert [d.id for d in first.items] == [f"{i:032d}" for i in range(2)]
    assert first.cursor is not None
    rest = await catalog.list_documents(svc, principal(), Scope.USER, "/", 2, first.cursor)
    assert [d.id for d in rest.items] == [f"{2:032d}"]
    assert rest.cursor is None
    params = [c.params for c in recorder.calls if c.name == "LIST_DOCUMENTS"]
    assert [(p["after"], p["limit"], p["path_prefix"]) for p in params] == [
        ("", 3, "/"),
        (f"{1:032d}", 3, "/"),
    ]


@pytest.mark.parametrize("limit", [0, catalog.MAX_LIST_LIMIT + 1])
async def test_a_limit_out_of_range_is_refused(tmp_path: Path, limit: int) -> None:
    svc, recorder = store(tmp_path)
    with pytest.raises(InvalidArgument, match="limit must be between 1 and 500"):
        await catalog.list_documents(svc, principal(), Scope.USER, "/", limit, None)
    assert recorder.calls == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   \n", "text must not be blank"),
        ("x" * (catalog.MAX_CHUNK_TEXT + 1), f"the limit is {catalog.MAX_CHUNK_TEXT}"),
    ],
)
async def test_a_blank_or_oversized_chunk_edit_is_refused(
    tmp_path: Path, text: str, message: str
) -> None:
    svc, recorder = store(tmp_path)
    with pytest.raises(InvalidArgument, match=message):
        await catalog.update_chunk(svc, principal(), Scope.USER, BODY, text, 1)
    assert recorder.calls == []


async def test_a_chunk_edit_opens_the_next_revision_and_counts_its_bytes(tmp_path: Path) -> None:
    svc, recorder = store(tmp_path)
    got = await catalog.update_chunk(svc, principal(), Scope.USER, BODY, "Other words!\n", 1)
    assert got.id == BODY
    [update] = [c.params for c in recorder.calls if c.name == "UPDATE_CHUNK"]
    assert (update["text"], update["revision"], update["next"]) == ("Other words!\n", 1, 3)
    assert update["embedding"] == [1.0, 0.0, 0.0, 0.0]
    [bump] = [c.params for c in recorder.calls if c.name == "BUMP_DOCUMENT"]
    assert (bump["id"], bump["revision"], bump["changed"]) == (DOC, 3, 1)
    [grown] = [c.params for c in recorder.calls if c.name == "ADD_QUOTA_DOCUMENT_BYTES"]
    assert grown == {**grown, "id": DOC, "delta": 2}  # "Other words!\n" is two bytes longer
    # All of it in one transaction, after the document's lock.
    [tx] = [t for t in recorder.transactions if "UPDATE_CHUNK" in t]
    assert tx[:2] == ["LOCK_CHUNK_DOCUMENT", "UPDATE_CHUNK"]


async def test_a_stale_chunk_edit_conflicts_naming_the_current_revision(tmp_path: Path) -> None:
    svc, recorder = store(tmp_path, Store(fresh=False))
    with pytest.raises(Conflict, match="chunk is at revision 7, not 1") as caught:
        await catalog.update_chunk(svc, principal(), Scope.USER, BODY, "New.\n", 1)
    assert caught.value.details == {"revision": 7}
    assert "BUMP_DOCUMENT" not in recorder.names()


async def test_editing_a_missing_chunk_is_not_found(tmp_path: Path) -> None:
    svc, recorder = store(tmp_path)
    with pytest.raises(NotFound, match="chunk not found"):
        await catalog.update_chunk(svc, principal(), Scope.USER, "e" * 32, "New.\n", 1)
    assert "UPDATE_CHUNK" not in recorder.names()


async def test_deleting_a_missing_document_is_not_found(tmp_path: Path) -> None:
    svc, recorder = store(tmp_path)
    with pytest.raises(NotFound, match="document not found"):
        await catalog.delete_document(svc, principal(), Scope.USER, "e" * 32)
    assert [c.name for c in recorder.calls] == ["LOCK_DOCUMENT"]
