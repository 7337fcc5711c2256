"""Export (exportMe and `palimpsest export`) then import into the emptied scopes gives back
the same records; a wrong or truncated file changes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from neo4j import AsyncGraphDatabase, Driver

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Database, Neo4jExecutor
from palimpsest.errors import Conflict, InvalidArgument, QuotaExceeded
from palimpsest.identity.principal import console_operator
from palimpsest.jobs.portability import export_to_file, import_from_file
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.portability import export
from palimpsest.resolvers.services import Services
from palimpsest.sqlmem import SqliteStore
from tests.integration import people
from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql
from tests.integration.people import count
from tests.integration.test_erasure import ERASE_USER
from tests.unit.recording import ConstantEmbedder

EXPORT_ME = "{ exportMe { format version lines bytes } }"
SEARCH = """query($q: String!, $kind: Source!) { search(scope: USER, query: $q, topK: 5,
  sources: [$kind]) { hits { kind text } } }"""
SQL = '{ sqlQuery(scope: USER, statement: "SELECT body, raw FROM notes ORDER BY id") { rows } }'
FACT = "query($id: ID!) { fact(scope: TENANT, id: $id) { sources { text } } }"


WRITTEN_BY = """MATCH (m:Memory {scope_key: $k, writer_key: $k}) WHERE m.writer_id = $w
RETURN count(m)"""
TENANT_WRITTEN_BY = "MATCH ()-[f:FACT {scope_key: $k, writer_id: $w}]->() RETURN count(f)"
TENANT_WRITER = "MATCH ()-[f:FACT {scope_key: $k, writer_key: $w}]->() RETURN count(f)"
UNLABELLED = """MATCH (e:Entity) WHERE e.scope_key IN [$k, $t]
  AND NOT any(label IN labels(e) WHERE label STARTS WITH 'Type_') RETURN count(e)"""


def kinds(lines: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for line in lines:
        kind = orjson.loads(line)["kind"]
        found[kind] = found.get(kind, 0) + 1
    return found


@pytest.fixture
def org(gql: Gql, token: Callable[..., str], neo4j_driver: Driver) -> dict[str, Any]:
    tenant, admin = people.new_org(gql, token, "export")
    alice = people.plant(gql, token, neo4j_driver, tenant, "alice")
    bob = people.plant(gql, token, neo4j_driver, tenant, "bob")
    shared = people.attest_shared(gql, [alice, bob], "payments")
    return {"tenant": tenant, "admin": admin, "alice": alice, "bob": bob, "shared": shared}


def test_export_then_import_into_the_emptied_scopes_reproduces_the_person(
    gql: Gql, org: dict[str, Any], settings: Settings, tmp_path: Path, neo4j_driver: Driver
) -> None:
    alice, bob = org["alice"], org["bob"]
    exported = ok(gql(EXPORT_ME, alice.token))["exportMe"]
    assert (exported["format"], exported["version"]) == ("palimpsest-export", 1)
    lines = exported["lines"]
    assert exported["bytes"] == sum(len(line.encode()) + 1 for line in lines)
    header, end = orjson.loads(lines[0]), orjson.loads(lines[-1])
    assert (header["tenant"], header["user"]) == (alice.tenant, alice.user)
    assert end == {"kind": "end", "records": len(lines) - 2}
    labels = people.by_label(neo4j_driver, alice.key)
    counted = kinds(lines)
    assert counted["memory"] == labels["Memory"]
    assert counted["document"] == labels["Document"]
    assert counted["entity"] == labels["Entity"]
    assert counted["fact"] == labels["FACT"]
    assert counted["span"] == labels["PendingSpan"]
    assert counted["tenant_fact"] == 3  # placed, written without a source, shared
    assert counted["sql_row"] == 2
    # Bob's words are not in Alice's export, not even on the fact they share.
    assert all(bob.marker not in line for line in lines)

    out = tmp_path / "alice.jsonl"
    written = asyncio.run(export_to_file(settings, alice.tenant, alice.user, out))
    on_file = out.read_text().splitlines()
    assert written["lines"] == len(on_file)
    assert on_file[1:] == lines[1:]
    assert out.stat().st_mode & 0o777 == 0o600

    bob_before = people.fingerprint(gql, neo4j_driver, [bob])
    ok(gql(ERASE_USER, org["admin"], u=alice.user))
    assert ok(gql(EXPORT_ME, alice.token))["exportMe"]["lines"][1:] == [
        orjson.dumps({"kind": "end", "records": 0}).decode()
    ]

    loaded = asyncio.run(import_from_file(settings, out))
    # The writer fields travel with the person's rows and are stamped again on tenant facts.
    assert count(neo4j_driver, WRITTEN_BY, k=alice.key, w=alice.user) == counted["memory"]
    written_tenant = count(neo4j_driver, TENANT_WRITTEN_BY, k=alice.tenant_key, w=alice.user)
    assert written_tenant == count(neo4j_driver, TENANT_WRITER, k=alice.tenant_key, w=alice.key)
    assert written_tenant >= 1
    # Entities get their type's label again (fact_input.type_label), as a write gives it.
    assert count(neo4j_driver, UNLABELLED, k=alice.key, t=alice.tenant_key) == 0
    assert loaded["records"] == {k: v for k, v in counted.items() if k not in ("header", "end")}
    again = ok(gql(EXPORT_ME, alice.token))["exportMe"]["lines"]
    assert again[1:] == lines[1:]
    # What was imported answers again: indexes, SQL, the shared fact's two sources.
    for kind in ("DOCUMENTS", "NOTES", "FACTS"):
        hits = ok(gql(SEARCH, alice.token, q=alice.marker, kind=kind))["search"]["hits"]
        assert hits
        assert any(alice.marker in h["text"] for h in hits)
    assert ok(gql(SQL, alice.token))["sqlQuery"]["rows"] == [
        [f"{alice.marker} one", {"$base64": "AAEC"}],
        [f"{alice.marker} two", None],
    ]
    shared = ok(gql(FACT, bob.token, id=org["shared"]))["fact"]
    assert len(shared["sources"]) == 2
    assert people.fingerprint(gql, neo4j_driver, [bob]) == bob_before

    # Into a scope that holds data: refused, nothing written.
    with pytest.raises(Conflict):
        asyncio.run(import_from_file(settings, out))
    assert ok(gql(EXPORT_ME, alice.token))["exportMe"]["lines"][1:] == lines[1:]


@pytest.fixture
def solo(gql: Gql, token: Callable[..., str], neo4j_driver: Driver) -> dict[str, Any]:
    tenant, admin = people.new_org(gql, token, "export")
    return {
        "tenant": tenant,
        "admin": admin,
        "alice": people.plant(gql, token, neo4j_driver, tenant, "alice"),
    }


def test_a_truncated_or_foreign_file_changes_nothing(
    gql: Gql, solo: dict[str, Any], settings: Settings, tmp_path: Path, neo4j_driver: Driver
) -> None:
    alice = solo["alice"]
    lines = ok(gql(EXPORT_ME, alice.token))["exportMe"]["lines"]
    ok(gql(ERASE_USER, solo["admin"], u=alice.user))
    bad = {
        "truncated": lines[:-3],
        "miscounted": [*lines[:-1], orjson.dumps({"kind": "end", "records": 1}).decode()],
        "foreign": ['{"kind": "header", "format": "other", "version": 1}', *lines[1:]],
        "unknown kind": [*lines[:2], '{"kind": "weird"}', *lines[2:]],
        "not json": [*lines[:2], "{oops", *lines[2:]],
    }
    for name, content in bad.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(content) + "\n")
        with pytest.raises(InvalidArgument):
            asyncio.run(import_from_file(settings, path))
    assert people.count(neo4j_driver, people.ROWS_OF_KEY, key=alice.key) == 0


def _damaged(lines: list[str], kind: str, damage: Callable[[dict[str, Any]], None]) -> list[str]:
    """The export with its first ``kind`` record changed by ``damage``."""
    at = next(i for i, line in enumerate(lines) if orjson.loads(line)["kind"] == kind)
    record = orjson.loads(lines[at])
    damage(record)
    return [*lines[:at], orjson.dumps(record).decode(), *lines[at + 1 :]]


LATE_DAMAGES: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "fact subject_id": ("fact", lambda r: r.pop("subject_id")),
    "fact props.note": ("fact", lambda r: r["props"].update(note={"nested": 1})),
    "tenant_fact subject.normalized_name": (
        "tenant_fact",
        lambda r: r["subject"].pop("normalized_name"),
    ),
    "sql_row values": ("sql_row", lambda r: r["values"].pop()),
}


def test_a_damaged_record_after_valid_ones_changes_nothing(
    gql: Gql, solo: dict[str, Any], settings: Settings, tmp_path: Path, neo4j_driver: Driver
) -> None:
    # Memories, documents, chunks and entities come first in the file: the damaged record
    # is refused in the first pass, before any of them is written.
    alice = solo["alice"]
    lines = ok(gql(EXPORT_ME, alice.token))["exportMe"]["lines"]
    ok(gql(ERASE_USER, solo["admin"], u=alice.user))
    for field, (kind, damage) in LATE_DAMAGES.items():
        path = tmp_path / f"{field}.jsonl"
        path.write_text("\n".join(_damaged(lines, kind, damage)) + "\n")
        with pytest.raises(InvalidArgument, match=rf"^line \d+: {field} must be"):
            asyncio.run(import_from_file(settings, path))
        assert people.count(neo4j_driver, people.ROWS_OF_KEY, key=alice.key) == 0
        assert not any(f.exists() for f in alice.sql_files(settings))
    whole = tmp_path / "whole.jsonl"
    whole.write_text("\n".join(lines) + "\n")
    assert asyncio.run(import_from_file(settings, whole))["records"]["sql_row"] == 2


def test_export_me_is_bounded_and_needs_a_user(
    gql: Gql, solo: dict[str, Any], token: Callable[..., str], settings: Settings
) -> None:
    agent_only = token(solo["tenant"], None, "planner")
    assert code_of(gql(EXPORT_ME, agent_only)) == "FORBIDDEN"
    alice = solo["alice"]
    full = ok(gql(EXPORT_ME, alice.token))["exportMe"]["bytes"]

    async def export_with_limit(limit: int) -> list[str]:
        driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
        try:
            svc = Services(
                db=Database(Neo4jExecutor(driver, settings.neo4j.database)),
                embedder=ConstantEmbedder(),
                settings=settings.replace(export_max_bytes=limit),
                sql=SqliteStore.from_settings(settings),
            )
            who = console_operator(alice.tenant)
            return await export.export_me(svc, replace(who, user_id=alice.user, roles=frozenset()))
        finally:
            await driver.close()

    assert len(asyncio.run(export_with_limit(full))) > 2
    with pytest.raises(QuotaExceeded) as refused:
        asyncio.run(export_with_limit(full - 1))
    assert refused.value.details == {"limit": "exportMaxBytes", "quota": full - 1}


FOREIGN_WRITER = """CALL () {
  MATCH (n {scope_key: $k}) WHERE n.writer_id IS NOT NULL OR n.writer_key IS NOT NULL
  RETURN n.writer_id AS id, n.writer_key AS key
  UNION ALL MATCH ()-[n:FACT {scope_key: $k}]->()
  WHERE n.writer_id IS NOT NULL OR n.writer_key IS NOT NULL
  RETURN n.writer_id AS id, n.writer_key AS key
}
RETURN count(CASE WHEN id <> $w OR key <> $k OR id IS NULL OR key IS NULL THEN 1 END)"""
OWN_WRITER = """CALL () {
  MATCH (n {scope_key: $k, writer_id: $w, writer_key: $k}) RETURN n
  UNION ALL MATCH ()-[n:FACT {scope_key: $k, writer_id: $w, writer_key: $k}]->() RETURN n
} RETURN count(n)"""


def test_an_import_takes_the_writer_from_the_importer_not_the_file(
    gql: Gql, solo: dict[str, Any], settings: Settings, tmp_path: Path, neo4j_driver: Driver
) -> None:
    # Like the scope stamps: a file that names another writer on the person's own rows
    # (a hand-edited or a forged one) is imported as written by the person it is imported to.
    alice = solo["alice"]
    lines = ok(gql(EXPORT_ME, alice.token))["exportMe"]["lines"]
    written = count(neo4j_driver, OWN_WRITER, k=alice.key, w=alice.user)
    assert written > 0
    ok(gql(ERASE_USER, solo["admin"], u=alice.user))
    forged = []
    for line in lines:
        record = orjson.loads(line)
        props = record.get("props")
        if isinstance(props, dict) and "writer_id" in props:
            props.update(writer_id="mallory", writer_key="f" * 32)
        forged.append(orjson.dumps(record).decode())
    assert forged != lines
    path = tmp_path / "forged-writer.jsonl"
    path.write_text("\n".join(forged) + "\n")
    asyncio.run(import_from_file(settings, path))
    assert count(neo4j_driver, FOREIGN_WRITER, k=alice.key, w=alice.user) == 0
    assert count(neo4j_driver, OWN_WRITER, k=alice.key, w=alice.user) == written
    assert ok(gql(EXPORT_ME, alice.token))["exportMe"]["lines"][1:] == lines[1:]
