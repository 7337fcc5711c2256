"""An export carries entity merges: the set-aside entities (their names are the person's data)
and the merge records. After erasing and importing, ``entityMerges`` answers the same records
and ``unmergeEntities`` restores facts, mentions, names and aliases exactly; a file of minor 2
(no such records) imports as before; a malformed merge record is refused and writes nothing.
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
from tests.integration.test_entities import (
    ALL,
    IMPORT,
    MERGE,
    UNMERGE,
    assert_facts,
    snapshot,
    works,
)

EXPORT = "{ exportMe { lines } }"
ERASE_ME = "mutation { eraseMe { status } }"
MERGES = """query($id: ID!) { entityMerges(scope: USER, entityId: $id) {
  id keepId mergedIds addedAliases factsMoved mentionsMoved createdAt undoneAt } }"""
RECORDS = """MATCH (r:EntityMerge) WHERE r.tenant_id = $t
RETURN r.id AS id, properties(r) AS props ORDER BY id"""
NEW_KINDS = ("merged_entity", "entity_merge")


@pytest.fixture
def member(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)


def stored(driver: Driver, tenant_id: str) -> dict[str, Any]:
    """The tenant's entities, facts, mentions and merge records, vectors aside (recomputed)."""
    found = snapshot(driver, tenant_id)
    found["facts"] = [
        (i, s, o, {k: v for k, v in p.items() if k not in VECTORS}) for i, s, o, p in found["facts"]
    ]
    records, _, _ = driver.execute_query(RECORDS, t=tenant_id)
    found["merges"] = [(r["id"], r["props"]) for r in records]
    return found


def merged_world(gql: Gql, who: str) -> tuple[str, str]:
    """Robert, Bob (mentioned in a chunk) and Rob, with a merge of Rob into Robert undone:
    Robert's and Bob's ids."""
    [chunk] = [
        c["id"]
        for c in ok(gql(IMPORT, who, m="# Notes\n\nBob Smith works at Acme.\n"))["importDocument"][
            "chunks"
        ]
        if "Bob" in c["text"]
    ]
    written = assert_facts(
        gql,
        who,
        works("Robert Smith", "Acme"),
        works("Bob Smith", "Acme Corp", source={"chunkId": chunk, "start": 0, "end": 9}),
        works("Rob Smith", "Globex"),
        {
            **works("Bob Smith", "x"),
            "predicate": "knows",
            "object": {"type": "person", "name": "Robert Smith"},
        },
    )
    robert, bob, rob = (written[i]["fact"]["subject"]["id"] for i in range(3))
    assert len({robert, bob, rob}) == 3
    ok(gql(MERGE, who, keep=robert, merge=[rob]))
    [undone] = ok(gql(MERGES, who, id=rob))["entityMerges"]
    ok(gql(UNMERGE, who, id=undone["id"]))
    return robert, bob


def write(tmp_path: Path, lines: list[str]) -> Path:
    out = tmp_path / f"{uuid.uuid4().hex[:6]}.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


def kinds_of(lines: list[str]) -> list[str]:
    return [orjson.loads(line)["kind"] for line in lines]


def test_merges_survive_export_and_import_and_unmerge_exactly(
    gql: Gql,
    member: str,
    neo4j_driver: Driver,
    tenant_id: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    robert, bob = merged_world(gql, member)
    before = stored(neo4j_driver, tenant_id)
    ok(gql(MERGE, member, keep=robert, merge=[bob]))
    merged = stored(neo4j_driver, tenant_id)
    records = ok(gql(MERGES, member, id=robert))["entityMerges"]
    assert [r["undoneAt"] is None for r in records] == [True, False]

    lines = ok(gql(EXPORT, member))["exportMe"]["lines"]
    kinds = kinds_of(lines)
    assert orjson.loads(lines[0])["minor"] >= 3  # merge records came in minor 3
    assert (kinds.count("merged_entity"), kinds.count("entity_merge")) == (1, 2)
    # Records point at rows written before them: the kept entity, then who was set aside.
    assert kinds.index("entity") < kinds.index("merged_entity") < kinds.index("entity_merge")
    assert kinds.index("entity_merge") < kinds.index("fact")
    [aside] = [orjson.loads(x) for x in lines if orjson.loads(x)["kind"] == "merged_entity"]
    assert (aside["props"]["id"], aside["props"]["name"]) == (bob, "Bob Smith")
    assert aside["props"]["merged_into"] == robert
    assert not set(aside["props"]) & {"scope_key", "tenant_id", "scope", "owner_id"}

    assert ok(gql(ERASE_ME, member))["eraseMe"]["status"] == "DONE"
    assert ok(gql(MERGES, member, id=robert))["entityMerges"] == []
    loaded = asyncio.run(import_from_file(settings, write(tmp_path, lines)))
    assert (loaded["records"]["merged_entity"], loaded["records"]["entity_merge"]) == (1, 2)

    assert stored(neo4j_driver, tenant_id) == merged
    assert ok(gql(MERGES, member, id=robert))["entityMerges"] == records
    assert ok(gql(MERGES, member, id=bob))["entityMerges"] == records[:1]
    assert ok(gql(EXPORT, member))["exportMe"]["lines"][1:] == lines[1:]
    restored = ok(gql(UNMERGE, member, id=records[0]["id"]))["unmergeEntities"]
    assert [e["id"] for e in restored] == [robert, bob]
    after = stored(neo4j_driver, tenant_id)
    assert {k: v for k, v in after.items() if k != "merges"} == {
        k: v for k, v in before.items() if k != "merges"
    }
    # The records stay, Bob's merge now undone.
    undone = dict(after["merges"])[records[0]["id"]]
    assert undone["undone_at"] is not None
    assert after["merges"] == [
        (i, {**p, "undone_at": undone["undone_at"], "locked_at": undone["locked_at"]})
        if i == records[0]["id"]
        else (i, p)
        for i, p in merged["merges"]
    ]


def test_an_export_of_minor_2_still_imports_without_the_merges(
    gql: Gql,
    member: str,
    neo4j_driver: Driver,
    tenant_id: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    robert, bob = merged_world(gql, member)
    ok(gql(MERGE, member, keep=robert, merge=[bob]))
    merged = stored(neo4j_driver, tenant_id)
    lines = ok(gql(EXPORT, member))["exportMe"]["lines"]
    older = [line for line in lines[1:-1] if orjson.loads(line)["kind"] not in NEW_KINDS]
    header = orjson.dumps({**orjson.loads(lines[0]), "minor": 2}).decode()
    end = orjson.dumps({"kind": "end", "records": len(older)}).decode()
    ok(gql(ERASE_ME, member))

    asyncio.run(import_from_file(settings, write(tmp_path, [header, *older, end])))
    now = stored(neo4j_driver, tenant_id)
    kept = [e for e in merged["entities"] if "Entity" in e[1]]
    assert now == {**merged, "entities": kept, "merges": []}
    assert ok(gql(MERGES, member, id=robert))["entityMerges"] == []
    assert ok(gql(EXPORT, member))["exportMe"]["lines"][1:-1] == older


def test_a_malformed_merge_record_is_refused_and_writes_nothing(
    gql: Gql,
    member: str,
    neo4j_driver: Driver,
    tenant_id: str,
    settings: Settings,
    tmp_path: Path,
) -> None:
    robert, bob = merged_world(gql, member)
    ok(gql(MERGE, member, keep=robert, merge=[bob]))
    lines = ok(gql(EXPORT, member))["exportMe"]["lines"]
    ok(gql(ERASE_ME, member))
    key = scope_key(tenant_id, Scope.USER, "alice")

    def broken(kind: str, change: Callable[[dict[str, Any]], None]) -> list[str]:
        out = []
        for line in lines:
            record = orjson.loads(line)
            if record["kind"] == kind:
                change(record)
            out.append(orjson.dumps(record).decode())
        return out

    cases = [
        broken("entity_merge", lambda r: r["props"].pop("id")),
        broken("entity_merge", lambda r: r["props"].update(merged_ids="bob")),
        broken("merged_entity", lambda r: r["props"].pop("merged_into")),
        broken("merged_entity", lambda r: r.update(props=[1])),
    ]
    for content in cases:
        with pytest.raises(InvalidArgument):
            asyncio.run(import_from_file(settings, write(tmp_path, content)))
    assert people.count(neo4j_driver, people.ROWS_OF_KEY, key=key) == 0
