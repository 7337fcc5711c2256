"""Mentions follow a chunk's revisions (docs/reference/documents.md, Mentions across
revisions), on the real Neo4j through GraphQL.

An edit leaves the old text's mentions, with their old offsets, on the closed version; the
current chunk keeps those whose marked text is still there, at its new place, and drops the
others, for a fact's source span and for a name the consolidator's extractor found alike. A
restore gives each restored chunk the mentions its restored version had. ``graphRecall``,
which finds chunks by their mentions, sees the same.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.jobs.portability import import_from_file
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import HARVEST, drain
from tests.integration.test_entities import ALL, assert_facts, entities, works
from tests.integration.test_export_version_mentions import ERASE_ME, EXPORT, stored, write

IMPORT = """mutation($m: String!, $path: String!) {
  importDocument(scope: USER, markdown: $m, path: $path)
  { summary { id revision } chunks { id text } } }"""
UPDATE = """mutation($id: ID!, $t: String!, $r: Int!) {
  updateChunk(scope: USER, id: $id, text: $t, revision: $r) { id revision text } }"""
RESTORE = """mutation($id: ID!, $r: Int!) { restoreDocument(scope: USER, id: $id, revision: $r)
  { summary { revision } chunks { id text } } }"""
GRAPH = """query($ids: [ID!]) { graphRecall(scope: USER, seedIds: $ids, hops: 0)
  { chunks { id } } }"""
DELETE = "mutation($id: ID!) { deleteDocument(scope: USER, id: $id) { chunksDeleted } }"
# Every mention edge of one chunk id: on the current chunk (revision null) or on a closed
# version (the revision it began at), with the text its offsets cut out of that node's text.
MENTIONS = """
MATCH (c {id: $c})-[m:MENTIONS]->(e:Entity) WHERE e.tenant_id = $t
RETURN CASE WHEN c:ChunkVersion THEN c.from_revision END AS revision, e.name AS name,
       m.start AS start, m.end AS end, substring(c.text, m.start, m.end - m.start) AS cut
ORDER BY revision, name, start"""

T1 = "Ada Lovelace met Bob Smith.\n"
T2 = "Yesterday Bob Smith met Grace.\n"
DOC1 = f"# Notes\n\n{T1}\nA closing line.\n"
DOC2 = f"# Notes\n\n{T2}\nA closing line.\n"
DROPPED = "# Notes\n\nA closing line.\n"
# Both ends of a fact mention the chunk at its source span.
FIRST = [
    ("Acme", 0, 12, "Ada Lovelace"),
    ("Ada Lovelace", 0, 12, "Ada Lovelace"),
    ("Bob Smith", 17, 26, "Bob Smith"),
    ("Initech", 17, 26, "Bob Smith"),
]
FOLLOWED = [("Bob Smith", 10, 19, "Bob Smith"), ("Initech", 10, 19, "Bob Smith")]


@pytest.fixture
def member(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)


def world(gql: Gql, who: str) -> tuple[str, str, str]:
    """A document whose paragraph two sourced facts mention: its path, id and paragraph id."""
    path = f"/notes/{uuid.uuid4().hex[:8]}"
    doc = ok(gql(IMPORT, who, m=DOC1, path=path))["importDocument"]
    [para] = [c["id"] for c in doc["chunks"] if c["text"] == T1]
    assert_facts(
        gql,
        who,
        works("Ada Lovelace", "Acme", source={"chunkId": para, "start": 0, "end": 12}),
        works("Bob Smith", "Initech", source={"chunkId": para, "start": 17, "end": 26}),
    )
    return path, doc["summary"]["id"], para


def chunks_naming(gql: Gql, who: str, name: str) -> list[str]:
    """The chunks ``graphRecall`` finds by their mentions of the person ``name`` alone."""
    [person] = [e for e in entities(gql, who, "person") if e["name"] == name]
    found = ok(gql(GRAPH, who, ids=[person["id"]]))["graphRecall"]["chunks"]
    return [c["id"] for c in found]


def likes(person: str, company: str) -> dict[str, Any]:
    return {**works(person, company), "predicate": "likes"}


def mentions(driver: Driver, tenant_id: str, chunk_id: str) -> dict[int | None, list[Any]]:
    """The chunk's mentions by node: None for the current chunk, else a version's revision."""
    records, _, _ = driver.execute_query(MENTIONS, c=chunk_id, t=tenant_id)
    out: dict[int | None, list[Any]] = {}
    for r in records:
        out.setdefault(r["revision"], []).append((r["name"], r["start"], r["end"], r["cut"]))
    return out


def edit(gql: Gql, who: str, door: str, path: str, para: str) -> None:
    if door == "updateChunk":
        assert ok(gql(UPDATE, who, id=para, t=T2, r=1))["updateChunk"]["text"] == T2
    else:
        [kept] = [
            c
            for c in ok(gql(IMPORT, who, m=DOC2, path=path))["importDocument"]["chunks"]
            if c["text"] == T2
        ]
        assert kept["id"] == para  # an edited paragraph keeps its id


@pytest.mark.parametrize("door", ["updateChunk", "reimport"])
def test_an_edit_leaves_old_mentions_on_the_version_and_follows_the_new_text(
    gql: Gql, member: str, neo4j_driver: Driver, tenant_id: str, door: str
) -> None:
    path, _, para = world(gql, member)
    assert mentions(neo4j_driver, tenant_id, para) == {None: FIRST}
    assert chunks_naming(gql, member, "Ada Lovelace") == [para]
    edit(gql, member, door, path, para)
    # Ada's quote is gone from the text: the current chunk no longer mentions her (nor Acme,
    # which her fact's span named); Bob's moved with his name.
    assert mentions(neo4j_driver, tenant_id, para) == {None: FOLLOWED, 1: FIRST}
    assert chunks_naming(gql, member, "Ada Lovelace") == []
    assert chunks_naming(gql, member, "Bob Smith") == [para]


def test_a_restore_gives_an_edited_chunk_its_old_mentions_back(
    gql: Gql, member: str, neo4j_driver: Driver, tenant_id: str
) -> None:
    path, doc_id, para = world(gql, member)
    edit(gql, member, "updateChunk", path, para)
    restored = ok(gql(RESTORE, member, id=doc_id, r=1))["restoreDocument"]
    assert restored["summary"]["revision"] == 3
    assert para in {c["id"] for c in restored["chunks"]}
    # Revision 1's mentions, once each (Bob's followed mention is the same one), and every
    # version keeps its own.
    assert mentions(neo4j_driver, tenant_id, para) == {None: FIRST, 1: FIRST, 2: FOLLOWED}


@pytest.mark.parametrize("drop", ["reimport", "delete"])
def test_a_restore_gives_a_dropped_chunk_its_old_mentions_back(
    gql: Gql,
    member: str,
    token: Callable[..., str],
    neo4j_driver: Driver,
    tenant_id: str,
    drop: str,
) -> None:
    # Carol's world in her own scope stays as it is whatever Alice restores.
    carol = token(tenant_id, "carol", "planner", memory_scopes=ALL, sql_scopes=ALL)
    _, _, hers = world(gql, carol)
    theirs = mentions(neo4j_driver, tenant_id, hers)
    path, doc_id, para = world(gql, member)
    # Facts without a source keep the entities when a delete withdraws the sourced ones.
    assert_facts(gql, member, likes("Ada Lovelace", "Acme"), likes("Bob Smith", "Initech"))
    if drop == "reimport":
        chunks = ok(gql(IMPORT, member, m=DROPPED, path=path))["importDocument"]["chunks"]
        assert para not in {c["id"] for c in chunks}
    else:
        ok(gql(DELETE, member, id=doc_id))
    assert mentions(neo4j_driver, tenant_id, para) == {1: FIRST}
    assert chunks_naming(gql, member, "Ada Lovelace") == []
    restored = ok(gql(RESTORE, member, id=doc_id, r=1))["restoreDocument"]
    assert [c["id"] for c in restored["chunks"] if c["text"] == T1] == [para]
    assert mentions(neo4j_driver, tenant_id, para) == {None: FIRST, 1: FIRST}
    assert chunks_naming(gql, member, "Ada Lovelace") == [para]
    assert mentions(neo4j_driver, tenant_id, hers) == theirs


def test_the_mentions_of_every_version_survive_export_and_import(
    gql: Gql,
    member: str,
    neo4j_driver: Driver,
    tenant_id: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    path, doc_id, para = world(gql, member)
    edit(gql, member, "reimport", path, para)
    ok(gql(RESTORE, member, id=doc_id, r=1))
    before = stored(neo4j_driver, tenant_id)
    lines = ok(gql(EXPORT, member))["exportMe"]["lines"]
    assert ok(gql(ERASE_ME, member))["eraseMe"]["status"] == "DONE"
    asyncio.run(import_from_file(settings, write(tmp_path, lines)))
    assert stored(neo4j_driver, tenant_id) == before
    assert mentions(neo4j_driver, tenant_id, para) == {None: FIRST, 1: FIRST, 2: FOLLOWED}


async def test_a_turns_extracted_mentions_follow_its_edit(
    gql: Gql, member: str, neo4j_driver: Driver, tenant_id: str, svc: Services
) -> None:
    assert_facts(gql, member, works("Ada Lovelace", "Acme"))
    spans = [{"text": "I met Ada Lovelace.", "speaker": "Bob", "sourceId": "1"}]
    [turn] = ok(gql(HARVEST, member, spans=spans, gen=1))["harvest"]["spanIds"]
    assert (await drain(svc, tenant_id, "alice")).consolidated == 1
    said = [("Ada Lovelace", 11, 23, "Ada Lovelace"), ("Bob", 0, 3, "Bob")]
    assert mentions(neo4j_driver, tenant_id, turn) == {None: said}
    ok(gql(UPDATE, member, id=turn, t="Bob: Yesterday I met Ada.", r=1))
    # The speaker's place was not touched; Ada's full name is gone from the turn.
    assert mentions(neo4j_driver, tenant_id, turn) == {None: [("Bob", 0, 3, "Bob")], 1: said}
