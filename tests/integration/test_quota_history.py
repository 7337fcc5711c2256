"""Quotas count every writer, on the real Neo4j: document revisions and chunk edits count on
the versions plane (with note versions), a re-import's new chunks and bytes on theirs, and
the consolidator's turns and mention entities like any API write. Each refusal is
QUOTA_EXCEEDED naming plane, limit and usage, and changes nothing; a refused consolidation
loses no span: it stays queued with the code, then becomes a dead letter."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.documents import catalog as documents
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.services import Services
from tests.integration.conftest import Gql
from tests.integration.cycle import config, drain, harvest, scope_of
from tests.integration.test_quotas import limited, refusal, snapshot

DOC = "# Plants\n\nThe aloe needs little water.\n\n- repot in spring\n"
MORE = DOC + "\nA new paragraph about ferns.\n"
VERSIONS = """
RETURN COUNT { MATCH (v:MemoryVersion {scope_key: $k}) }
     + COUNT { MATCH (r:DocumentRevision {scope_key: $k})
               WHERE NOT EXISTS { MATCH (d:Document {scope_key: $k, id: r.document_id})
                                  WHERE d.revision = r.revision } }
     + COUNT { MATCH (c:ChunkVersion {scope_key: $k}) } AS versions,
       COUNT { MATCH (c:Chunk {scope_key: $k}) } AS chunks,
       COUNT { MATCH (e:Entity {scope_key: $k}) } AS entities
"""
SPANS = """MATCH (p:PendingSpan {scope_key: $k})
RETURN p.status AS status, p.attempts AS attempts, p.last_error AS error"""
DEAD = "{ deadLetters(limit: 10) { items { spanId attempts error } } }"
REQUEUE = "mutation($ids: [ID!]!) { requeueDeadLetters(spanIds: $ids) }"


def used(driver: Driver, key: str) -> dict[str, int]:
    [row], _, _ = driver.execute_query(VERSIONS, k=key)
    return {k: int(v) for k, v in dict(row).items()}


def tight(svc: Services, **limits: int) -> Services:
    return replace(svc, settings=svc.settings.replace(**limits))


async def edited(svc: Services, who: Principal) -> tuple[str, str]:
    """A document at revision 2 (one chunk edit); its id and the edited chunk's id."""
    doc = await document_import.import_document(svc, who, Scope.USER, DOC, None, "/p", None)
    aloe = next(c for c in doc.chunks if c.text.startswith("The aloe"))
    await documents.update_chunk(svc, who, Scope.USER, aloe.id, "The aloe likes sun.\n", 1)
    return doc.summary.id, aloe.id


async def test_document_revisions_and_chunk_edits_count_as_versions(
    svc: Services, neo4j_driver: Driver
) -> None:
    free, who, key = limited(svc)
    doc_id, aloe = await edited(free, who)
    have = used(neo4j_driver, key)["versions"]
    assert have == 2  # revision 1 (now past) and the edited chunk's old version
    full = tight(svc, max_note_versions=have)
    before = snapshot(neo4j_driver, key)

    with pytest.raises(QuotaExceeded) as refused:  # an edit: one chunk version, one record
        await documents.update_chunk(full, who, Scope.USER, aloe, "Dry soil.\n", 2)
    assert refusal(refused) == {"plane": "versions", "limit": have, "usage": have, "after": 4}
    assert refused.value.details["setting"] == "PALIMPSEST_MAX_NOTE_VERSIONS"
    with pytest.raises(QuotaExceeded) as refused:  # a re-import to the path: a new revision
        await document_import.import_document(full, who, Scope.USER, MORE, None, "/p", None)
    assert refusal(refused)["plane"] == "versions"
    with pytest.raises(QuotaExceeded) as refused:  # a restore is a revision too
        await document_revisions.restore(full, who, Scope.USER, doc_id, 1)
    assert refusal(refused)["plane"] == "versions"
    assert snapshot(neo4j_driver, key) == before  # every refusal changed nothing
    # Notes share the plane: an overwrite keeps a note version, one more than the limit.
    await memory.set_value(full, who, Scope.USER, "k", "v1", None, False, None)
    before = snapshot(neo4j_driver, key)
    with pytest.raises(QuotaExceeded) as refused:
        await memory.set_value(full, who, Scope.USER, "k", "v2", None, False, None)
    assert refusal(refused) == {"plane": "versions", "limit": have, "usage": have, "after": 3}
    assert snapshot(neo4j_driver, key) == before
    # One more allowed: the edit passes, and the count is exact.
    room = tight(svc, max_note_versions=have + 2)
    await documents.update_chunk(room, who, Scope.USER, aloe, "Dry soil.\n", 2)
    assert used(neo4j_driver, key)["versions"] == have + 2


async def test_deleting_is_never_refused_by_a_full_versions_quota(
    svc: Services, neo4j_driver: Driver
) -> None:
    """Finding 7 of issue 46: with the versions quota full, a person could not delete what
    they wrote (the tombstone counted as a version). Deletes pass, and are counted."""
    free, who, key = limited(svc)
    doc_id, _ = await edited(free, who)
    await memory.set_value(free, who, Scope.USER, "k", "v1", None, False, None)
    await memory.set_value(free, who, Scope.USER, "k", "v2", None, False, None)
    have = used(neo4j_driver, key)["versions"]
    assert have == 3  # the document's two, the note's first value
    full = tight(svc, max_note_versions=have)
    with pytest.raises(QuotaExceeded):  # full: an overwrite is refused
        await memory.set_value(full, who, Scope.USER, "k", "v3", None, False, None)

    assert await memory.delete(full, who, Scope.USER, "k")
    gone = await documents.delete_document(full, who, Scope.USER, doc_id)

    assert gone.chunks > 0
    assert await memory.get(full, who, Scope.USER, "k") is None
    # Counted all the same: the note's last state and its tombstone, the document's ended
    # revision and its closed chunks; the scope is now past its limit.
    after = used(neo4j_driver, key)["versions"]
    assert after >= have + 2 + 1 + gone.chunks
    # Writing the key anew keeps no past and passes; overwriting it would keep one: refused.
    await memory.set_value(full, who, Scope.USER, "k", "v4", None, False, None)
    with pytest.raises(QuotaExceeded) as refused:
        await memory.set_value(full, who, Scope.USER, "k", "v5", None, False, None)
    assert refusal(refused)["plane"] == "versions"


async def test_a_reimport_and_an_edit_count_their_chunks_and_bytes(
    svc: Services, neo4j_driver: Driver
) -> None:
    free, who, key = limited(svc)
    _, aloe = await edited(free, who)
    chunks = used(neo4j_driver, key)["chunks"]
    size = len(DOC.replace("The aloe needs little water.", "The aloe likes sun.").encode())
    by_chunks = tight(svc, max_scope_chunks=chunks)
    before = snapshot(neo4j_driver, key)
    with pytest.raises(QuotaExceeded) as refused:  # one paragraph more
        await document_import.import_document(by_chunks, who, Scope.USER, MORE, None, "/p", None)
    assert refusal(refused) == {
        "plane": "chunks",
        "limit": chunks,
        "usage": chunks,
        "after": chunks + 1,
    }
    by_bytes = tight(svc, max_scope_document_bytes=size)
    with pytest.raises(QuotaExceeded) as refused:  # a longer chunk
        await documents.update_chunk(by_bytes, who, Scope.USER, aloe, "The aloe likes sun!!\n", 2)
    assert refusal(refused) == {
        "plane": "documentBytes",
        "limit": size,
        "usage": size,
        "after": size + 1,
    }
    assert snapshot(neo4j_driver, key) == before
    shorter = await documents.update_chunk(by_bytes, who, Scope.USER, aloe, "Sun.\n", 2)
    assert shorter.text == "Sun.\n"  # a shrinking edit adds nothing: it passes at the limit


async def test_a_refused_consolidation_keeps_its_span_queued_then_dead_with_the_code(
    gql: Gql, svc: Services, neo4j_driver: Driver, token: Callable[..., str]
) -> None:
    tenant = f"qc-{uuid.uuid4().hex[:8]}"
    runner = token(tenant, "alice", "planner", run="run-1", session="s-1")
    _, _, key = scope_of(tenant, "alice")
    harvest(gql, runner, ["hello there"])  # the speaker Alice becomes an entity
    assert (await drain(svc, tenant, "alice")).consolidated == 1
    have = used(neo4j_driver, key)
    assert have["entities"] == 1

    harvest(gql, runner, ["Bob here"], speaker="Bob", sourceId="bob-1")  # a second entity
    full = tight(svc, max_scope_entities=1)
    before = snapshot(neo4j_driver, key)
    first = await drain(full, tenant, "alice", config("w", max_attempts=3))
    assert (first.consolidated, first.failed) == (0, 3)
    assert first.dead == 1  # after its three leases, with the refusal's code
    after = snapshot(neo4j_driver, key)
    assert used(neo4j_driver, key) == have  # no turn, no mention, no entity was written
    pending: list[Any] = [dict(r) for r in neo4j_driver.execute_query(SPANS, k=key)[0]]
    assert sorted(p["status"] for p in pending) == ["dead", "done"]
    [letter] = gql(DEAD, runner)["data"]["deadLetters"]["items"]
    assert letter["attempts"] == 3
    assert letter["error"].startswith("QUOTA_EXCEEDED: ")
    assert "entities" in letter["error"]
    assert "at most 1" in letter["error"]
    assert before[0] != after[0]  # only the span's own record moved (attempts, error)

    # Room again: the requeued span is consolidated, nothing was lost.
    assert gql(REQUEUE, runner, ids=[letter["spanId"]])["data"]["requeueDeadLetters"]
    assert (await drain(svc, tenant, "alice")).consolidated == 1
    assert used(neo4j_driver, key)["entities"] == 2


async def test_consolidated_turns_count_as_chunks(
    gql: Gql, svc: Services, neo4j_driver: Driver, token: Callable[..., str]
) -> None:
    tenant = f"qc-{uuid.uuid4().hex[:8]}"
    runner = token(tenant, "alice", "planner", run="run-1", session="s-1")
    _, _, key = scope_of(tenant, "alice")
    harvest(gql, runner, ["one"])
    assert (await drain(svc, tenant, "alice")).consolidated == 1
    chunks = used(neo4j_driver, key)["chunks"]  # the conversation's root and one turn
    assert chunks == 2
    harvest(gql, runner, ["two"], sourceId="two")
    outcome = await drain(tight(svc, max_scope_chunks=chunks), tenant, "alice", config("w"))
    assert (outcome.consolidated, outcome.dead) == (0, 1)
    assert used(neo4j_driver, key)["chunks"] == chunks
