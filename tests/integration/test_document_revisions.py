"""Document revisions on the real Neo4j: every change is a revision, every revision reads back
byte for byte, diffs, restores; erasure leaves no revision behind."""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Callable
from typing import Any

from neo4j import Driver

from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql

CHUNKS = "chunks { id text parentId index position span { startLine endLine startChar endChar } }"
IMPORT = (
    "mutation($m: String!, $path: String, $fresh: Boolean! = false) {"
    " importDocument(scope: USER, markdown: $m, path: $path, newDocument: $fresh)"
    " { markdown summary { id revision } " + CHUNKS + " } }"
)
UPDATE = """mutation($id: ID!, $t: String!, $r: Int!) {
  updateChunk(scope: USER, id: $id, text: $t, revision: $r) { id revision text } }"""
DELETE = "mutation($id: ID!) { deleteDocument(scope: USER, id: $id) { chunksDeleted } }"
RESTORE = """mutation($id: ID!, $r: Int!) { restoreDocument(scope: USER, id: $id, revision: $r)
  { markdown summary { revision } chunks { id } } }"""
AT = (
    "query($id: ID!, $r: Int, $k: Instant) { document(scope: USER, id: $id, revision: $r,"
    " knownAt: $k) { markdown summary { revision } " + CHUNKS + " } }"
)
HISTORY = """query($id: ID!, $limit: Int = 100, $after: String) {
  documentHistory(scope: USER, id: $id, limit: $limit, after: $after) {
    items { revision createdAt deleted changedChunks provenance { origin } } cursor hasMore } }"""
DIFF = """query($id: ID!, $a: Int!, $b: Int!) {
  documentDiff(scope: USER, id: $id, fromRevision: $a, toRevision: $b) }"""
SEARCH = """query($q: String!, $k: Instant) { recall(scope: USER, query: $q, topK: 20,
  sources: [DOCUMENTS], when: {knownAt: $k}) { hits { id text } } }"""

V1 = (
    "Front matter line\n\n# Runbook\n\nIntro paragraph.\n\n## Deploy\n\n- step one\n"
    "  - nested\n- step two\n\n```sh\nmake deploy\n```\n\n> careful\n"
)
EDITED = "Intro paragraph, edited by hand.\n"
V2 = V1.replace("Intro paragraph.\n", EDITED)
# Re-import: a new paragraph, a changed heading, a list item gone, CRLF nowhere else.
V3 = (
    "Front matter line\n\n# Runbook\n\nIntro paragraph, edited by hand.\n\nA brand new "
    "paragraph.\n\n## Deploy safely\n\n- step one\n  - nested\n\n```sh\nmake deploy\n```\n\n"
    "> careful\n"
)


def assert_exact(doc: dict[str, Any], text: str) -> None:
    """The revision's Markdown is ``text`` and every chunk's span cuts its text out of it."""
    assert doc["markdown"] == text
    for i, chunk in enumerate(doc["chunks"]):
        span = chunk["span"]
        assert text[span["startChar"] : span["endChar"]] == chunk["text"]
        assert chunk["index"] == i
        lines = re.split(r"(?<=\n)", text)
        assert "".join(lines[span["startLine"] : span["endLine"]]) == chunk["text"]


def test_edit_reimport_delete_restore_and_read_every_revision(gql: Gql, who: str) -> None:
    path = f"/rev/{uuid.uuid4().hex[:8]}"
    first = ok(gql(IMPORT, who, m=V1, path=path))["importDocument"]
    doc_id = first["summary"]["id"]
    assert first["summary"]["revision"] == 1
    intro = next(c for c in first["chunks"] if c["text"] == "Intro paragraph.\n")
    # 2: a chunk edit keeps the chunk's id.
    edited = ok(gql(UPDATE, who, id=intro["id"], t=EDITED, r=1))["updateChunk"]
    assert edited == {"id": intro["id"], "revision": 2, "text": EDITED}
    # 3: a re-import to the same path is a revision of the same document.
    again = ok(gql(IMPORT, who, m=V3, path=path))["importDocument"]
    assert again["summary"] == {"id": doc_id, "revision": 3}
    assert_exact(again, V3)
    ids2 = {c["text"]: c["id"] for c in first["chunks"]}
    ids3 = {c["text"]: c["id"] for c in again["chunks"]}
    for same in ("# Runbook\n", "- step one\n", "  - nested\n", "> careful\n", EDITED):
        assert ids3[same] == ids2.get(same, intro["id"]), same  # unchanged: the same chunk
    # An unchanged re-import writes nothing.
    assert ok(gql(IMPORT, who, m=V3, path=path))["importDocument"]["summary"]["revision"] == 3
    # 4: a delete is a tombstone; 5: restore revision 2.
    assert ok(gql(DELETE, who, id=doc_id))["deleteDocument"]["chunksDeleted"] == len(ids3)
    assert ok(gql(AT, who, id=doc_id)) == {"document": None}
    restored = ok(gql(RESTORE, who, id=doc_id, r=2))["restoreDocument"]
    assert restored["markdown"] == V2
    assert restored["summary"]["revision"] == 5
    assert {c["id"] for c in restored["chunks"]} == set(ids2.values())  # the old ids back
    expected = {1: V1, 2: V2, 3: V3, 5: V2}
    for revision, text in expected.items():
        doc = ok(gql(AT, who, id=doc_id, r=revision))["document"]
        assert doc["summary"]["revision"] == revision
        assert_exact(doc, text)
    assert code_of(gql(AT, who, id=doc_id, r=4)) == "NOT_FOUND"  # the deletion
    history = ok(gql(HISTORY, who, id=doc_id))["documentHistory"]
    items = history["items"]
    assert [i["revision"] for i in items] == [5, 4, 3, 2, 1]
    assert [i["deleted"] for i in items] == [False, True, False, False, False]
    assert items[3]["changedChunks"] == 1
    assert items[4]["changedChunks"] == len(first["chunks"])
    # knownAt: each revision's own time reads that revision.
    for item in items:
        if not item["deleted"]:
            doc = ok(gql(AT, who, id=doc_id, k=item["createdAt"]))["document"]
            assert doc["markdown"] == expected[item["revision"]]
    assert ok(gql(AT, who, id=doc_id, k="2001-01-01T00:00:00Z")) == {"document": None}
    assert ok(gql(AT, who, id=doc_id, k="2999-01-01T00:00:00Z"))["document"]["markdown"] == V2
    # Diffs are difflib's unified diff of the two revisions' Markdown.
    for a, b in ((1, 2), (1, 3), (2, 5), (3, 3)):
        want = "".join(
            difflib.unified_diff(
                expected[a].splitlines(keepends=True),
                expected[b].splitlines(keepends=True),
                f"revision {a}",
                f"revision {b}",
            )
        )
        assert ok(gql(DIFF, who, id=doc_id, a=a, b=b))["documentDiff"] == want
    assert "-Intro paragraph.\n+Intro paragraph, edited by hand.\n" in want_of(gql, who, doc_id)
    # History pages newest first.
    page = ok(gql(HISTORY, who, id=doc_id, limit=2))["documentHistory"]
    assert [i["revision"] for i in page["items"]] == [5, 4]
    assert page["hasMore"]
    rest = ok(gql(HISTORY, who, id=doc_id, limit=10, after=page["cursor"]))["documentHistory"]
    assert [i["revision"] for i in rest["items"]] == [3, 2, 1]
    assert not rest["hasMore"]


def want_of(gql: Gql, who: str, doc_id: str) -> str:
    return str(ok(gql(DIFF, who, id=doc_id, a=1, b=2))["documentDiff"])


def test_bad_input_and_other_scopes(
    gql: Gql, who: str, token: Callable[..., str], tenant: str, neo4j_driver: Driver
) -> None:
    doc = ok(gql(IMPORT, who, m="# A\n\nbody\n", path=None))["importDocument"]
    doc_id = doc["summary"]["id"]
    other = token(tenant, f"rev-other-{uuid.uuid4().hex[:6]}", "writer")
    missing = "f" * 32
    before = tenant_rows(neo4j_driver, tenant)
    for query, args in (
        (AT, {"r": 99}),
        (AT, {"r": 1}),
        (HISTORY, {}),
        (DIFF, {"a": 1, "b": 1}),
        (RESTORE, {"r": 1}),
    ):
        foreign = gql(query, other, id=doc_id, **args)
        absent = gql(query, other, id=missing, **args)
        assert code_of(foreign) == "NOT_FOUND"
        assert foreign == absent
    assert code_of(gql(AT, who, id=doc_id, r=99)) == "NOT_FOUND"
    assert code_of(gql(RESTORE, who, id=doc_id, r=2)) == "NOT_FOUND"
    assert code_of(gql(DIFF, who, id=doc_id, a=2, b=1)) == "INVALID_ARGUMENT"
    assert code_of(gql(DIFF, who, id=doc_id, a=1, b=7)) == "NOT_FOUND"
    for _ in range(2):
        ok(gql(HISTORY, who, id=doc_id))
        ok(gql(AT, who, id=doc_id, r=1))
        ok(gql(DIFF, who, id=doc_id, a=1, b=1))
    assert tenant_rows(neo4j_driver, tenant) == before  # reads changed nothing
    # newDocument keeps today's behaviour: a second document at the same path.
    path = f"/dup/{uuid.uuid4().hex[:8]}"
    a = ok(gql(IMPORT, who, m="# one\n", path=path))["importDocument"]["summary"]["id"]
    b = ok(gql(IMPORT, who, m="# two\n", path=path, fresh=True))["importDocument"]
    assert b["summary"]["id"] != a
    assert b["summary"]["revision"] == 1


def tenant_rows(driver: Driver, tenant: str) -> list[Any]:
    """Every node and relationship of the tenant, with all their properties (other workers
    share the database, so the scan is the tenant's)."""
    rows = driver.execute_query(
        "MATCH (n) WHERE n.tenant_id = $tenant WITH n ORDER BY elementId(n) "
        "OPTIONAL MATCH (n)-[r]->() WITH n, collect(properties(r)) AS rels "
        "RETURN collect([labels(n), properties(n), rels]) AS all",
        tenant=tenant,
    ).records[0]
    return list(rows["all"])


def test_recall_known_at_finds_the_old_text_not_the_new(gql: Gql, who: str) -> None:
    doc = ok(gql(IMPORT, who, m="# Plans\n\nThe launch is in Lisbon harbour.\n"))
    para = doc["importDocument"]["chunks"][1]
    history = ok(gql(HISTORY, who, id=doc["importDocument"]["summary"]["id"]))["documentHistory"]
    then = history["items"][0]["createdAt"]
    ok(gql(UPDATE, who, id=para["id"], t="The launch moved to Oslo fjord.\n", r=1))
    now_hits = ok(gql(SEARCH, who, q="Lisbon harbour launch"))["recall"]["hits"]
    assert all("Lisbon" not in h["text"] for h in now_hits)
    past = ok(gql(SEARCH, who, q="Lisbon harbour launch", k=then))["recall"]["hits"]
    assert [h["text"] for h in past if h["id"] == para["id"]] == [
        "The launch is in Lisbon harbour.\n"
    ]
    assert all("Oslo" not in h["text"] for h in past)


ERASE_ME = """mutation { eraseMe { status removed { documents chunks chunkRevisions
  documentRevisions } } }"""


def test_erasure_removes_every_revision(
    gql: Gql, token: Callable[..., str], neo4j_driver: Driver
) -> None:
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    me = token(tenant, "eraser", "writer")
    path = "/erase/me"
    doc = ok(gql(IMPORT, me, m=V1, path=path))["importDocument"]
    doc_id = doc["summary"]["id"]
    intro = next(c for c in doc["chunks"] if c["text"] == "Intro paragraph.\n")
    ok(gql(UPDATE, me, id=intro["id"], t=EDITED, r=1))
    ok(gql(IMPORT, me, m=V3, path=path))
    ok(gql(DELETE, me, id=doc_id))
    [before] = neo4j_driver.execute_query(
        "MATCH (v:ChunkVersion {document_id: $id}) RETURN count(v) AS n", id=doc_id
    ).records
    assert before["n"] > len(doc["chunks"])  # the edit's copy and the re-import's closed ones
    receipt = ok(gql(ERASE_ME, me))["eraseMe"]
    assert receipt["status"] == "DONE", receipt
    removed = receipt["removed"]
    assert removed["documentRevisions"] == 4
    assert removed["chunkRevisions"] == before["n"]
    # A whole-database scan: nothing of any revision is left.
    [left] = neo4j_driver.execute_query(
        "MATCH (n) WHERE (n.document_id = $id OR n.id = $id OR n.tenant_id = $tenant) "
        "AND NOT n:Erasure "
        "RETURN count(n) AS n, collect(DISTINCT labels(n)) AS labels",
        id=doc_id,
        tenant=tenant,
    ).records
    assert (left["n"], left["labels"]) == (0, [])


def test_a_diff_over_the_line_cap_is_refused_and_a_large_one_answers(
    gql: Gql, who: str, neo4j_driver: Driver, tenant: str
) -> None:
    """A revision longer than PALIMPSEST_DIFF_MAX_LINES (20,000) is refused naming the limit,
    changing nothing; large imports, re-imports and diffs (run in the offload workers) give
    the same answers as the functions themselves."""
    long = "".join(f"line {i}\n" for i in range(20_001))  # one paragraph: one chunk
    doc_id = ok(gql(IMPORT, who, m=long, path=None))["importDocument"]["summary"]["id"]
    before = tenant_rows(neo4j_driver, tenant)
    refused = gql(DIFF, who, id=doc_id, a=1, b=1)
    assert code_of(refused) == "QUOTA_EXCEEDED"
    extensions = refused["errors"][0]["extensions"]
    assert (extensions["limit"], extensions["allowed"], extensions["lines"]) == (
        "diffMaxLines",
        20_000,
        20_001,
    )
    assert tenant_rows(neo4j_driver, tenant) == before
    path = f"/large/{uuid.uuid4().hex[:8]}"
    # Over offload.INLINE_BYTES (64 KiB) in few chunks (each is embedded).
    body = "The river stone was quiet on Monday. " * 12
    old = "".join(f"# Part {i}\n\n{body}{i}.\n\n" for i in range(150))
    new = old.replace(f"{body}75.", f"{body}seventy-five.").replace("# Part 7\n", "# Part seven\n")
    first = ok(gql(IMPORT, who, m=old, path=path))["importDocument"]
    assert_exact(first, old)
    again = ok(gql(IMPORT, who, m=new, path=path))["importDocument"]
    assert_exact(again, new)
    assert again["summary"]["revision"] == 2
    large_id = again["summary"]["id"]
    assert large_id == first["summary"]["id"]
    want = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "revision 1", "revision 2"
        )
    )
    assert ok(gql(DIFF, who, id=large_id, a=1, b=2))["documentDiff"] == want
