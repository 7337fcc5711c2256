"""The document doors (``graphql.documents``) through the schema on the recording executor:
a document's records mapped to the wire (summary, chunk tree, spans, Markdown), pages, and
the resolvers' refusals as codes."""

from __future__ import annotations

from pathlib import Path

from tests.unit.graphql.doors import answer
from tests.unit.principals import principal
from tests.unit.recording import NOW, services
from tests.unit.resolvers.documents.test_catalog import BODY, DOC, HEAD, Store

DOCUMENT = """query($id: ID!) {
  document(scope: USER, id: $id) {
    summary { id title path chunkCount revision updatedAt provenance { agent origin } }
    chunks { id type text parentId index level span { startLine endLine startChar endChar } }
    markdown
  }
}"""


async def test_a_document_reaches_the_wire_whole(tmp_path: Path) -> None:
    svc, _ = services(Store(), tmp_path)
    data, errors = await answer(svc, principal(), DOCUMENT, id=DOC)
    assert errors == []
    assert data is not None
    doc = data["document"]
    assert doc["summary"] == {
        "id": DOC,
        "title": "Notes",
        "path": "/notes.md",
        "chunkCount": 2,
        "revision": 2,
        "updatedAt": NOW.isoformat(),
        "provenance": {"agent": "planner", "origin": "AGENT"},
    }
    assert [(c["id"], c["type"], c["parentId"], c["index"]) for c in doc["chunks"]] == [
        (HEAD, "HEADING", None, 0),
        (BODY, "PARAGRAPH", HEAD, 1),
    ]
    assert doc["chunks"][1]["span"] == {"startLine": 2, "endLine": 3, "startChar": 0, "endChar": 11}
    assert doc["markdown"] == "---\nx: 1\n---\n# Notes\n\nSome text.\n"


async def test_a_missing_document_or_chunk_is_null(tmp_path: Path) -> None:
    svc, _ = services(Store(), tmp_path)
    data, errors = await answer(svc, principal(), DOCUMENT, id="e" * 32)
    assert (data, errors) == ({"document": None}, [])
    query = "query($id: ID!) { chunk(scope: USER, id: $id) { id text } }"
    data, _ = await answer(svc, principal(), query, id="e" * 32)
    assert data == {"chunk": None}
    data, _ = await answer(svc, principal(), query, id=BODY)
    assert data == {"chunk": {"id": BODY, "text": "Some text.\n"}}


async def test_documents_page_with_a_cursor(tmp_path: Path) -> None:
    svc, recorder = services(Store(docs=3), tmp_path)
    query = """query($after: String) {
      documents(scope: USER, pathPrefix: "/n", limit: 2, after: $after) {
        items { id } cursor hasMore
      }
    }"""
    data, _ = await answer(svc, principal(), query, after=None)
    assert data is not None
    first = data["documents"]
    assert ([i["id"] for i in first["items"]], first["hasMore"]) == (
        [f"{0:032d}", f"{1:032d}"],
        True,
    )
    data, _ = await answer(svc, principal(), query, after=first["cursor"])
    assert data == {"documents": {"items": [{"id": f"{2:032d}"}], "cursor": None, "hasMore": False}}
    assert {c.params["path_prefix"] for c in recorder.calls} == {"/n"}


async def test_a_stale_chunk_edit_is_a_conflict_with_the_current_revision(
    tmp_path: Path,
) -> None:
    svc, _ = services(Store(fresh=False), tmp_path)
    mutation = """mutation($id: ID!) {
      updateChunk(scope: USER, id: $id, text: "New.", revision: 1) { id }
    }"""
    data, errors = await answer(svc, principal(), mutation, id=BODY)
    assert data is None
    assert [(e["code"], e["revision"]) for e in errors] == [("CONFLICT", 7)]


async def test_a_chunk_edit_answers_the_chunk(tmp_path: Path) -> None:
    svc, recorder = services(Store(), tmp_path)
    mutation = """mutation($id: ID!) {
      updateChunk(scope: USER, id: $id, text: "New words.", revision: 1) { id documentId }
    }"""
    data, errors = await answer(svc, principal(), mutation, id=BODY)
    assert errors == []
    assert data == {"updateChunk": {"id": BODY, "documentId": DOC}}
    [update] = [c.params for c in recorder.calls if c.name == "UPDATE_CHUNK"]
    assert (update["text"], update["revision"]) == ("New words.", 1)


async def test_deleting_a_missing_document_is_not_found(tmp_path: Path) -> None:
    svc, _ = services(Store(), tmp_path)
    mutation = 'mutation { deleteDocument(scope: USER, id: "' + "e" * 32 + '") { chunksDeleted } }'
    _, errors = await answer(svc, principal(), mutation)
    assert [e["code"] for e in errors] == ["NOT_FOUND"]


async def test_a_bad_limit_is_invalid_argument(tmp_path: Path) -> None:
    svc, recorder = services(Store(), tmp_path)
    _, errors = await answer(
        svc, principal(), "{ documents(scope: USER, limit: 0) { items { id } } }"
    )
    assert [e["code"] for e in errors] == ["INVALID_ARGUMENT"]
    assert recorder.calls == []
