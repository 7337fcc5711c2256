"""Retention sweeps of document revisions on the real Neo4j: revisions that ended before the
tenant's versions window go (their closed chunk versions and their records), never a
document's current one; a read of what was swept (a revision, ``knownAt``, a diff, a restore,
a ``knownAt`` recall over documents) says the history there was swept; beside concurrent
writers every write is kept and every revision left reads whole."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.resolvers.services import Services, utc_now
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.test_sweep import POLICY, sweep_user

IMPORT = """mutation($m: String!, $path: String) {
  importDocument(scope: USER, markdown: $m, path: $path)
  { markdown summary { id revision } chunks { id text } } }"""
UPDATE = """mutation($id: ID!, $t: String!, $r: Int!) {
  updateChunk(scope: USER, id: $id, text: $t, revision: $r) { revision } }"""
AT = """query($id: ID!, $r: Int, $k: Instant) {
  document(scope: USER, id: $id, revision: $r, knownAt: $k) { markdown summary { revision } } }"""
HISTORY = """query($id: ID!) { documentHistory(scope: USER, id: $id, limit: 100) {
  items { revision createdAt } } }"""
DIFF = """query($id: ID!, $a: Int!, $b: Int!) {
  documentDiff(scope: USER, id: $id, fromRevision: $a, toRevision: $b) }"""
RESTORE = """mutation($id: ID!, $r: Int!) {
  restoreDocument(scope: USER, id: $id, revision: $r) { summary { revision } } }"""
RECALL = """query($q: String!, $k: Instant) { recall(scope: USER, query: $q, topK: 5,
  sources: [DOCUMENTS], when: {knownAt: $k}) { hits { id } } }"""
ROWS = """
MATCH (d:Document {scope_key: $key, id: $id})
RETURN d.revision AS revision, d.history_swept_revision AS swept,
       d.history_swept_before AS horizon,
       COLLECT { MATCH (r:DocumentRevision {scope_key: $key, document_id: $id})
                 RETURN r.revision ORDER BY r.revision } AS records,
       COLLECT { MATCH (c:ChunkVersion {scope_key: $key, document_id: $id})
                 RETURN [c.from_revision, c.to_revision] } AS versions
"""

V1 = "# Runbook\n\nIntro paragraph.\n\n## Deploy\n\nStep one.\n"
V2 = V1.replace("Intro paragraph.", "Intro, edited.")
V3 = V2.replace("Step one.", "Step one, then two.") + "\nA new closing paragraph.\n"
V4 = V3.replace("Intro, edited.", "Intro, edited again.")


def rows(driver: Driver, tenant: str, user: str, doc_id: str) -> dict[str, Any]:
    key = scope_key(tenant, Scope.USER, user)
    records, _, _ = driver.execute_query(ROWS, key=key, id=doc_id)
    return dict(records[0])


def refusal(body: dict[str, Any]) -> dict[str, Any]:
    [error] = body["errors"]
    extensions: dict[str, Any] = error["extensions"]
    assert extensions["code"] == "INVALID_ARGUMENT", body
    assert extensions["historySwept"] is True, body
    return extensions


def times(gql: Gql, who: str, doc_id: str) -> dict[int, datetime]:
    items = ok(gql(HISTORY, who, id=doc_id))["documentHistory"]["items"]
    return {int(i["revision"]): datetime.fromisoformat(i["createdAt"]) for i in items}


@pytest.fixture
def people(token: Callable[..., str]) -> tuple[str, str, str]:
    tenant = f"dsw-{uuid.uuid4().hex[:8]}"
    return tenant, token(tenant, "alice", "writer"), token(tenant, "boss", admin=True)


def four_revisions(gql: Gql, who: str) -> str:
    """A document at revision 4: an edit, a re-import, an edit."""
    path = f"/sweep/{uuid.uuid4().hex[:8]}"
    first = ok(gql(IMPORT, who, m=V1, path=path))["importDocument"]
    intro = next(c for c in first["chunks"] if c["text"].startswith("Intro"))
    ok(gql(UPDATE, who, id=intro["id"], t="Intro, edited.\n", r=1))
    assert ok(gql(IMPORT, who, m=V3, path=path))["importDocument"]["markdown"] == V3
    ok(gql(UPDATE, who, id=intro["id"], t="Intro, edited again.\n", r=2))  # kept by rev 3
    doc_id: str = first["summary"]["id"]
    return doc_id


async def test_a_sweep_removes_exactly_the_revisions_past_the_window(
    gql: Gql, svc: Services, neo4j_driver: Driver, people: tuple[str, str, str]
) -> None:
    tenant, alice, boss = people
    doc_id = four_revisions(gql, alice)
    at = times(gql, alice, doc_id)
    assert sorted(at) == [1, 2, 3, 4]
    texts = {1: V1, 2: V2, 3: V3, 4: V4}
    for r, text in texts.items():
        assert ok(gql(AT, alice, id=doc_id, r=r))["document"]["markdown"] == text
    before = rows(neo4j_driver, tenant, "alice", doc_id)
    assert before["records"] == [1, 2, 3, 4]
    assert before["swept"] is None

    # Defaults keep every revision for ever, however late the sweep.
    far = await sweep_user(svc, tenant, "alice", utc_now() + timedelta(days=3650))
    assert (far.document_revisions, far.chunk_versions) == (0, 0)
    assert rows(neo4j_driver, tenant, "alice", doc_id) == before

    # A window of one hour, swept at t3 + 1h - half the gap between t2 and t3: revision 1
    # (ended at t2) is past it, revision 2 (ended at t3) is not.
    ok(gql(POLICY, boss, v=3600))
    when = at[3] + timedelta(hours=1) - (at[3] - at[2]) / 2
    gone = [v for v in before["versions"] if v[1] <= 2]  # chunk versions only revision 1 held
    assert gone
    swept = await sweep_user(svc, tenant, "alice", when)
    assert (swept.document_revisions, swept.chunk_versions) == (1, len(gone))
    after = rows(neo4j_driver, tenant, "alice", doc_id)
    assert after["records"] == [2, 3, 4]
    assert sorted(after["versions"]) == sorted(v for v in before["versions"] if v[1] > 2)
    assert (after["swept"], after["horizon"].to_native()) == (1, at[2])

    # What is left reads exactly as before; what is gone says so.
    for r in (2, 3, 4):
        assert ok(gql(AT, alice, id=doc_id, r=r))["document"]["markdown"] == texts[r]
    told = refusal(gql(AT, alice, id=doc_id, r=1))
    assert told["historySweptRevision"] == 1
    assert told["historySweptBefore"] == at[2].isoformat()
    refusal(gql(AT, alice, id=doc_id, k=at[1].isoformat()))
    assert ok(gql(AT, alice, id=doc_id, k=at[2].isoformat()))["document"]["markdown"] == V2
    never = (at[1] - timedelta(days=1)).isoformat()  # before the document existed: still null
    assert ok(gql(AT, alice, id=doc_id, k=never)) == {"document": None}
    refusal(gql(DIFF, alice, id=doc_id, a=1, b=4))
    assert "errors" not in gql(DIFF, alice, id=doc_id, a=2, b=4)
    refusal(gql(RESTORE, alice, id=doc_id, r=1))
    assert rows(neo4j_driver, tenant, "alice", doc_id) == after  # the refusal wrote nothing
    refusal(gql(RECALL, alice, q="Intro paragraph", k=at[1].isoformat()))
    assert "errors" not in gql(RECALL, alice, q="Intro paragraph", k=at[2].isoformat())
    assert "errors" not in gql(RECALL, alice, q="Intro paragraph")  # the present: untouched

    # A window of one second, later: everything but the current revision.
    ok(gql(POLICY, boss, v=1))
    swept = await sweep_user(svc, tenant, "alice", utc_now() + timedelta(seconds=5))
    assert (swept.document_revisions, swept.chunk_versions) == (2, len(after["versions"]))
    end = rows(neo4j_driver, tenant, "alice", doc_id)
    assert (end["records"], end["versions"], end["swept"]) == ([4], [], 3)
    assert ok(gql(AT, alice, id=doc_id))["document"]["markdown"] == V4
    assert ok(gql(AT, alice, id=doc_id, r=4))["document"]["markdown"] == V4
    refusal(gql(AT, alice, id=doc_id, r=3))
    restored = ok(gql(RESTORE, alice, id=doc_id, r=4))["restoreDocument"]
    assert restored["summary"]["revision"] == 5  # a restore of what is kept still works


async def test_a_document_sweep_beside_concurrent_writers_keeps_every_write(
    gql: Gql, svc: Services, neo4j_driver: Driver, people: tuple[str, str, str]
) -> None:
    tenant, alice, boss = people
    text = "# Log\n\nentry 0.\n"
    first = ok(gql(IMPORT, alice, m=text, path="/log"))["importDocument"]
    doc_id = first["summary"]["id"]
    chunk = next(c["id"] for c in first["chunks"] if c["text"].startswith("entry"))
    for r in range(1, 13):  # revisions 2..13, to be swept
        ok(gql(UPDATE, alice, id=chunk, t=f"entry {r}.\n", r=r))
    ok(gql(POLICY, boss, v=1))
    await asyncio.sleep(1.5)

    def write() -> None:  # the chunk's revision is the document's: one chunk is edited
        for r in range(13, 28):
            assert ok(gql(UPDATE, alice, id=chunk, t=f"entry {r}.\n", r=r))["updateChunk"]

    writer = asyncio.ensure_future(asyncio.to_thread(write))
    removed, beside = 0, 0
    while not writer.done():  # sweeps while it writes
        removed += (await sweep_user(svc, tenant, "alice", utc_now(), batch=2)).document_revisions
        beside += 1
    await writer
    assert beside >= 1
    end = rows(neo4j_driver, tenant, "alice", doc_id)
    assert end["revision"] == 28  # no write lost
    assert end["swept"] >= 12  # the old ones went, never the current
    assert end["swept"] < 28
    assert removed == end["swept"]  # each swept record removed once
    assert end["records"] == list(range(end["swept"] + 1, 29))  # what is left is contiguous
    assert all(v[1] > end["swept"] + 1 for v in end["versions"])  # no orphaned chunk version
    for r in end["records"]:  # every revision left reads whole, with its own text
        doc = ok(gql(AT, alice, id=doc_id, r=r))["document"]
        assert doc["markdown"] == f"# Log\n\nentry {r - 1}.\n"
    refusal(gql(AT, alice, id=doc_id, r=end["swept"]))
