"""The documents plane through GraphQL: lossless round trip, tree, spans, revisions, scopes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql

FIXTURES = Path(__file__).parent.parent / "unit" / "fixtures" / "markdown"
IMPORT = """mutation($m: String!, $path: String, $title: String) {
  importDocument(scope: USER, markdown: $m, path: $path, title: $title) {
    markdown summary { id title path chunkCount }
    chunks { id type text parentId position index level language revision
             span { startLine endLine startChar endChar } } } }"""
GET = """query($id: ID!) { document(scope: USER, id: $id) { markdown
  chunks { id text revision } } }"""
UPDATE = """mutation($id: ID!, $text: String!, $rev: Int!) {
  updateChunk(scope: USER, id: $id, text: $text, revision: $rev) { revision text } }"""


CHUNK = "query($id: ID!) { chunk(scope: USER, id: $id) { id text } }"
OBSERVED = """mutation($t: Instant) { importDocument(scope: USER, markdown: "# x\\n",
  observedAt: $t) { summary { id } } }"""


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.md")))
def test_round_trip_is_lossless_and_spans_are_exact(gql: Gql, who: str, name: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    for variant in (text, text.replace("\n", "\r\n")):
        doc = ok(gql(IMPORT, who, m=variant))["importDocument"]
        assert doc["markdown"] == variant
        assert doc["summary"]["chunkCount"] == len(doc["chunks"])
        ids = {c["id"]: c for c in doc["chunks"]}
        for chunk in doc["chunks"]:
            span = chunk["span"]
            assert variant[span["startChar"] : span["endChar"]] == chunk["text"]
            if chunk["parentId"] is not None:
                assert ids[chunk["parentId"]]["index"] < chunk["index"]


READ_BACK = """query($id: ID!) { document(scope: USER, id: $id) { markdown
  summary { id title path chunkCount }
  chunks { id type text parentId position index level language revision
           span { startLine endLine startChar endChar } } } }"""


def test_tree_types_and_title(gql: Gql, who: str, neo4j_driver: Any) -> None:
    text = (
        "# Runbook\n\nIntro paragraph.\n\n## Deploy\n\n- step one\n  - nested\n- step two\n\n"
        "```sh\nmake deploy\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> careful\n"
    )
    doc = ok(gql(IMPORT, who, m=text, path="/ops/runbook"))["importDocument"]
    assert doc["summary"]["title"] == "Runbook"
    chunks = doc["chunks"]
    by_text = {c["text"].strip(): c for c in chunks}
    assert [c["type"] for c in chunks] == [
        "HEADING",
        "PARAGRAPH",
        "HEADING",
        "LIST_ITEM",
        "LIST_ITEM",
        "LIST_ITEM",
        "CODE",
        "TABLE",
        "QUOTE",
    ]
    deploy = by_text["## Deploy"]
    assert deploy["parentId"] == by_text["# Runbook"]["id"]
    assert by_text["- nested"]["parentId"] == by_text["- step one"]["id"]
    assert by_text["```sh\nmake deploy\n```"]["language"] == "sh"
    assert by_text["```sh\nmake deploy\n```"]["parentId"] == deploy["id"]
    # What import answered is what the database holds, edges included.
    stored = ok(gql(READ_BACK, who, id=doc["summary"]["id"]))["document"]
    assert stored["chunks"] == doc["chunks"]
    assert stored["markdown"] == doc["markdown"] == text
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (d:Document {id: $id})-[:HAS_ROOT]->(root) "
        "RETURN COUNT { (root)-[:HAS_CHILD*]->() } AS tree, "
        "COUNT { (:Chunk {document_id: $id})-[:NEXT]->() } AS next",
        id=doc["summary"]["id"],
    )
    assert (records[0]["tree"], records[0]["next"]) == (len(chunks), len(chunks) - 1)
    listed = ok(gql('{ documents(scope: USER, pathPrefix: "/ops/") { items { id path } } }', who))
    assert listed["documents"]["items"] == [{"id": doc["summary"]["id"], "path": "/ops/runbook"}]


def test_edit_with_revision_check(gql: Gql, who: str) -> None:
    doc = ok(gql(IMPORT, who, m="# T\n\nold text\n\nkeep me\n"))["importDocument"]
    para = doc["chunks"][1]
    edited = ok(gql(UPDATE, who, id=para["id"], text="new text\n", rev=para["revision"]))
    assert edited["updateChunk"] == {"revision": 2, "text": "new text\n"}
    stale = gql(UPDATE, who, id=para["id"], text="lost update\n", rev=para["revision"])
    assert stale["errors"][0]["extensions"]["code"] == "CONFLICT"
    assert stale["errors"][0]["extensions"]["revision"] == 2
    after = ok(gql(GET, who, id=doc["summary"]["id"]))["document"]
    assert after["markdown"] == "# T\n\nnew text\n\nkeep me\n"


def test_delete_and_scope_isolation(
    gql: Gql, who: str, token: Callable[..., str], tenant: str
) -> None:
    doc = ok(gql(IMPORT, who, m="# Private\n\nsecret plans\n"))["importDocument"]
    doc_id = doc["summary"]["id"]
    other = token(tenant, "someone-else", "writer")
    chunk = doc["chunks"][1]
    # Reads: another scope's id is null, exactly like an id that was never written.
    for read, real in ((GET, doc_id), (CHUNK, chunk["id"])):
        assert ok(gql(read, who, id=real)) != ok(gql(read, who, id="f" * 32))
        foreign = gql(read, other, id=real)
        missing = gql(read, other, id="f" * 32)
        assert foreign == missing
        assert list(ok(foreign).values()) == [None]
    # Writes: NOT_FOUND, the same for both.
    refused = gql(UPDATE, other, id=chunk["id"], text="x\n", rev=1)
    assert refused["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    delete = "mutation($id: ID!) { deleteDocument(scope: USER, id: $id) { chunksDeleted } }"
    foreign_delete = gql(delete, other, id=doc_id)
    assert foreign_delete == gql(delete, other, id="f" * 32)
    assert foreign_delete["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert ok(gql(delete, who, id=doc_id))["deleteDocument"] == {"chunksDeleted": 2}
    assert ok(gql(GET, who, id=doc_id)) == {"document": None}
    assert ok(gql(CHUNK, who, id=chunk["id"])) == {"chunk": None}
    assert code_of(gql(UPDATE, who, id=chunk["id"], text="x\n", rev=1)) == "NOT_FOUND"


def test_bad_input_is_refused(gql: Gql, who: str) -> None:
    for variables in (
        {"m": "a\x00b"},
        {"m": "# x\n", "path": "no-slash"},
        {"m": "x" * (5 * 1024 * 1024 + 1)},
    ):
        body = gql(IMPORT, who, **variables)
        assert body["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert code_of(gql(GET, who, id="not-an-id")) == "INVALID_ARGUMENT"
    assert code_of(gql(CHUNK, who, id="F" * 32)) == "INVALID_ARGUMENT"
    for bad in ("2020-13", "2020-01-01T10:00:00", "yesterday"):
        body = gql(OBSERVED, who, t=bad)
        assert code_of(body) == "INVALID_ARGUMENT"
        assert "$t" in body["errors"][0]["message"]


BULK = """mutation($docs: [DocumentInput!]!) { importDocuments(scope: USER, documents: $docs)
  { summary { id title path } markdown } }"""


def test_bulk_import_is_all_or_nothing(gql: Gql, who: str) -> None:
    docs = [{"markdown": f"# Note {i}\n\nbody {i}\n", "path": f"/bulk/{i}"} for i in range(3)]
    imported = ok(gql(BULK, who, docs=docs))["importDocuments"]
    assert [d["summary"]["title"] for d in imported] == ["Note 0", "Note 1", "Note 2"]
    assert [d["markdown"] for d in imported] == [d["markdown"] for d in docs]
    listed = ok(gql('{ documents(scope: USER, pathPrefix: "/bulk/") { items { path } } }', who))
    paths = sorted(d["path"] for d in listed["documents"]["items"])
    assert paths == ["/bulk/0", "/bulk/1", "/bulk/2"]
    bad = [{"markdown": "# ok\n", "path": "/bulk2/a"}, {"markdown": "x", "path": "no-slash"}]
    refused = gql(BULK, who, docs=bad)
    assert refused["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert "documents[1].path" in refused["errors"][0]["message"]
    none = ok(gql('{ documents(scope: USER, pathPrefix: "/bulk2/") { items { path } } }', who))
    assert none["documents"]["items"] == []
    too_many = gql(BULK, who, docs=[{"markdown": "x"}] * 101)
    assert too_many["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
