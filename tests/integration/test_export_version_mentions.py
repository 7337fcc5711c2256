"""An export carries the mentions of closed chunk versions. A revision that drops a chunk
relabels it ``:ChunkVersion`` with its ``MENTIONS`` edges, and a merge moves and counts them
(``mentionsMoved``): after erasing and importing, the same merge answers the same counts and
the stored edges are the same; a file of minor 3 imports as before; a version mention that
names no version of the scope (another scope's, or a malformed one) draws no edge.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.jobs.portability import import_from_file
from palimpsest.resolvers.portability.export import VECTORS
from tests.integration import people
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.test_entities import ALL, MERGE, UNMERGE, assert_facts, works

EXPORT = "{ exportMe { lines } }"
ERASE_ME = "mutation { eraseMe { status } }"
IMPORT = """mutation($m: String!, $path: String!) {
  importDocument(scope: USER, markdown: $m, path: $path) { chunks { id text } } }"""
MERGES = """query($id: ID!) { entityMerges(scope: USER, entityId: $id) {
  id keepId mergedIds addedAliases factsMoved mentionsMoved undoneAt } }"""
V1 = "# Notes\n\nBob Smith works at Acme.\n\nRobert Smith works at Acme too.\n"
V2 = "# Notes\n\nRobert Smith works at Acme too.\n"
# Every mention edge of the tenant, keyed by what names its chunk: a current chunk by id, a
# closed version by (id, the revision it began at); ``locked_at`` is a write's lock stamp.
MENTIONS = """
MATCH (c)-[m:MENTIONS]->(e) WHERE e.tenant_id = $t
RETURN CASE WHEN c:ChunkVersion THEN 'version' ELSE 'chunk' END AS kind, c.id AS c,
       c.from_revision AS rev, e.id AS e, properties(m) AS props
ORDER BY kind, c, rev, e"""
ENTITIES = """MATCH (e) WHERE (e:Entity OR e:MergedEntity) AND e.tenant_id = $t
RETURN e.id AS id, labels(e) AS labels, properties(e) AS props ORDER BY id"""
FACTS = """MATCH (s)-[f:FACT]->(o) WHERE f.tenant_id = $t
RETURN f.id AS id, s.id AS s, o.id AS o, properties(f) AS props ORDER BY id"""
KINDS = ("chunk", "version")
VERSIONS_OF = """MATCH (v:ChunkVersion {scope_key: $k})
RETURN v.document_id AS document_id, v.id AS chunk_id, v.from_revision AS from_revision"""


@pytest.fixture
def member(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)


def stored(driver: Driver, tenant_id: str) -> dict[str, Any]:
    """The tenant's entities, facts and mentions as stored (vectors and lock stamps aside)."""

    def rows(query: str) -> list[dict[str, Any]]:
        records, _, _ = driver.execute_query(query, t=tenant_id)
        return [
            {
                **r.data(),
                "props": {k: v for k, v in r["props"].items() if k not in (*VECTORS, "locked_at")},
            }
            for r in records
        ]

    return {"entities": rows(ENTITIES), "facts": rows(FACTS), "mentions": rows(MENTIONS)}


def revised_world(gql: Gql, who: str) -> tuple[str, str]:
    """Robert mentioned (with Acme) in a chunk that stays, Bob (with Acme Corp) in one a
    revision then drops: Robert's and Bob's ids."""
    path = f"/notes/{uuid.uuid4().hex[:8]}"
    chunks = ok(gql(IMPORT, who, m=V1, path=path))["importDocument"]["chunks"]
    [gone] = [c["id"] for c in chunks if c["text"].startswith("Bob")]
    [stays] = [c["id"] for c in chunks if c["text"].startswith("Robert")]
    written = assert_facts(
        gql,
        who,
        works("Robert Smith", "Acme", source={"chunkId": stays, "start": 0, "end": 12}),
        works("Bob Smith", "Acme Corp", source={"chunkId": gone, "start": 0, "end": 9}),
    )
    robert, bob = (written[i]["fact"]["subject"]["id"] for i in range(2))
    ok(gql(IMPORT, who, m=V2, path=path))
    return robert, bob


def write(tmp_path: Path, lines: list[str]) -> Path:
    out = tmp_path / f"{uuid.uuid4().hex[:6]}.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


def entity_records(lines: list[str]) -> list[dict[str, Any]]:
    return [r for r in map(orjson.loads, lines) if r["kind"] == "entity"]


def merge_answer(gql: Gql, who: str, keep: str, merged: str) -> dict[str, Any]:
    """Merge ``merged`` into ``keep`` and undo it: the merge's record as ``entityMerges``
    answered it (its id aside)."""
    ok(gql(MERGE, who, keep=keep, merge=[merged]))
    record = dict(ok(gql(MERGES, who, id=keep))["entityMerges"][0])
    ok(gql(UNMERGE, who, id=record.pop("id")))
    return record


def test_version_mentions_survive_export_and_import(
    gql: Gql,
    member: str,
    neo4j_driver: Driver,
    tenant_id: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    robert, bob = revised_world(gql, member)
    world = stored(neo4j_driver, tenant_id)
    on = {kind: [m["e"] for m in world["mentions"] if m["kind"] == kind] for kind in KINDS}
    assert (len(on["chunk"]), len(on["version"])) == (2, 2)  # + Acme, + Acme Corp
    assert robert in on["chunk"]
    assert bob in on["version"]
    # The original's answer: the merge moves Bob's mention from the closed version.
    answer = merge_answer(gql, member, robert, bob)
    assert (answer["factsMoved"], answer["mentionsMoved"]) == (1, 1)
    before = stored(neo4j_driver, tenant_id)  # with the undone merge's emptied stacks

    lines = ok(gql(EXPORT, member))["exportMe"]["lines"]
    assert orjson.loads(lines[0])["minor"] >= 4  # version mentions came in minor 4
    kinds = [orjson.loads(line)["kind"] for line in lines]
    assert kinds.index("chunk_version") < kinds.index("entity")
    [bobs] = [r for r in entity_records(lines) if r["props"]["id"] == bob]
    [mention] = bobs["version_mentions"]
    assert set(mention) == {"document_id", "chunk_id", "from_revision", "props"}
    assert (mention["props"]["start"], mention["props"]["end"]) == (0, 9)
    assert not set(mention["props"]) & {"scope_key", "tenant_id", "scope", "owner_id"}

    assert ok(gql(ERASE_ME, member))["eraseMe"]["status"] == "DONE"
    asyncio.run(import_from_file(settings, write(tmp_path, lines)))
    assert stored(neo4j_driver, tenant_id) == before
    assert ok(gql(EXPORT, member))["exportMe"]["lines"][1:] == lines[1:]
    # The imported copy answers the same merge the same way, and unmerges it the same way.
    assert merge_answer(gql, member, robert, bob) == answer
    assert stored(neo4j_driver, tenant_id) == before


def test_an_export_of_minor_3_still_imports_without_the_version_mentions(
    gql: Gql,
    member: str,
    neo4j_driver: Driver,
    tenant_id: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    revised_world(gql, member)
    world = stored(neo4j_driver, tenant_id)
    lines = ok(gql(EXPORT, member))["exportMe"]["lines"]
    older = []
    for line in lines[1:-1]:
        record = orjson.loads(line)
        record.pop("version_mentions", None)
        older.append(orjson.dumps(record).decode())
    header = orjson.dumps({**orjson.loads(lines[0]), "minor": 3}).decode()
    ok(gql(ERASE_ME, member))

    asyncio.run(import_from_file(settings, write(tmp_path, [header, *older, lines[-1]])))
    now = stored(neo4j_driver, tenant_id)
    kept = [m for m in world["mentions"] if m["kind"] != "version"]
    assert now == {**world, "mentions": kept}


def test_a_version_mention_draws_no_edge_outside_its_scope_and_a_bad_one_is_refused(
    gql: Gql,
    member: str,
    token: Callable[..., str],
    neo4j_driver: Driver,
    tenant_id: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    other = token(tenant_id, "carol", "planner", memory_scopes=ALL, sql_scopes=ALL)
    revised_world(gql, other)
    carol = scope_key(tenant_id, Scope.USER, "carol")
    records, _, _ = neo4j_driver.execute_query(VERSIONS_OF, k=carol)
    foreign = records[0].data()
    revised_world(gql, member)
    lines = ok(gql(EXPORT, member))["exportMe"]["lines"]
    ok(gql(ERASE_ME, member))
    alice = scope_key(tenant_id, Scope.USER, "alice")

    def edited(change: Callable[[dict[str, Any]], None]) -> list[str]:
        out = []
        for line in lines:
            record = orjson.loads(line)
            if record["kind"] == "entity":
                for m in record["version_mentions"]:
                    change(m)
            out.append(orjson.dumps(record).decode())
        return out

    for bad in (lambda m: m.pop("from_revision"), lambda m: m.update(chunk_id=None)):
        with pytest.raises(InvalidArgument):
            asyncio.run(import_from_file(settings, write(tmp_path, edited(bad))))
    assert people.count(neo4j_driver, people.ROWS_OF_KEY, key=alice) == 0

    # Every version mention names Carol's version: the import draws none of them.
    asyncio.run(import_from_file(settings, write(tmp_path, edited(lambda m: m.update(foreign)))))
    on_versions, _, _ = neo4j_driver.execute_query(
        "MATCH (v:ChunkVersion)-[m:MENTIONS]->(e:Entity {scope_key: $k}) RETURN count(m) AS n",
        k=alice,
    )
    assert on_versions[0]["n"] == 0
    carols, _, _ = neo4j_driver.execute_query(
        "MATCH (v:ChunkVersion {scope_key: $k})-[m:MENTIONS]->(e) "
        "RETURN count(m) AS n, collect(DISTINCT e.scope_key) AS keys",
        k=carol,
    )
    assert (carols[0]["n"], carols[0]["keys"]) == (2, [carol])
