"""Quotas on every plane, on the real Neo4j: each refusal is QUOTA_EXCEEDED naming the plane,
the limit and the usage; a refused write leaves the scope exactly as it was; a limit set
below what a scope holds refuses new rows and removes nothing; concurrent writers of one
scope never pass the limit together."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.cycle import harvesting as harvest
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from tests.integration.conftest import Gql
from tests.unit.principals import principal

# Everything of one scope a write could add to, with every property (the Scope node too).
SNAPSHOT = """
UNWIND ['Memory', 'MemoryVersion', 'Document', 'DocumentRevision', 'Chunk', 'ChunkVersion',
        'Entity', 'PendingSpan', 'Source', 'Scope'] AS label
CALL (label) {
  MATCH (n:$(label) {scope_key: $k})
  RETURN collect(properties(n)) AS rows
}
WITH label, rows
ORDER BY label
RETURN collect([label, size(rows), rows]) AS nodes,
       COLLECT { MATCH ()-[r {scope_key: $k}]->() RETURN count(r) } [0] AS relationships,
       COLLECT { MATCH ()-[f:FACT {scope_key: $k}]->() RETURN f.id ORDER BY f.id } AS facts
"""


def limited(svc: Services, **limits: int) -> tuple[Services, Principal, str]:
    """Services with these limits, a fresh tenant's user, and their USER scope key."""
    quota = replace(svc, settings=svc.settings.replace(**limits))
    who = principal(tenant_id=f"quota-{uuid.uuid4().hex[:8]}", user_id="alice")
    return quota, who, resolve_scope(who, Scope.USER).scope_key


def snapshot(driver: Driver, key: str) -> Any:
    [row], _, _ = driver.execute_query(SNAPSHOT, k=key)
    return (row["nodes"], row["relationships"], row["facts"])


def fact(subject: str, obj: str, predicate: str = "knows") -> FactDraft:
    return FactDraft(EntityRef("Person", subject), predicate, EntityRef("Person", obj), None)


def refusal(e: pytest.ExceptionInfo[QuotaExceeded]) -> dict[str, Any]:
    assert e.value.code.value == "QUOTA_EXCEEDED"
    return {k: e.value.details[k] for k in ("plane", "limit", "usage", "after")}


async def test_facts_are_refused_past_the_limit_and_nothing_is_written(
    svc: Services, neo4j_driver: Driver
) -> None:
    quota, who, key = limited(svc, max_scope_facts=3, max_scope_entities=0)
    await facts.assert_facts(
        quota, who, Scope.USER, [fact("a", "b"), fact("a", "c"), fact("b", "c")]
    )
    before = snapshot(neo4j_driver, key)
    with pytest.raises(QuotaExceeded) as refused:
        await facts.assert_facts(quota, who, Scope.USER, [fact("c", "d")])
    assert refusal(refused) == {"plane": "facts", "limit": 3, "usage": 3, "after": 4}
    assert refused.value.details["setting"] == "PALIMPSEST_MAX_SCOPE_FACTS"
    assert snapshot(neo4j_driver, key) == before  # not the entity "d", not a counter
    # Re-asserting a stored fact adds no fact: it passes at the limit.
    [again] = await facts.assert_facts(quota, who, Scope.USER, [fact("a", "b")])
    assert not again.created


async def test_entities_are_refused_past_the_limit(svc: Services, neo4j_driver: Driver) -> None:
    quota, who, key = limited(svc, max_scope_entities=3, max_scope_facts=0)
    await facts.assert_facts(quota, who, Scope.USER, [fact("ann", "bob")])
    await facts.assert_facts(quota, who, Scope.USER, [fact("ann", "cy", "likes")])  # 1 new
    before = snapshot(neo4j_driver, key)
    with pytest.raises(QuotaExceeded) as refused:
        await facts.assert_facts(quota, who, Scope.USER, [fact("dee", "eve")])
    assert refusal(refused) == {"plane": "entities", "limit": 3, "usage": 3, "after": 5}
    assert snapshot(neo4j_driver, key) == before
    # A new fact between stored entities creates no entity.
    [ok] = await facts.assert_facts(quota, who, Scope.USER, [fact("bob", "cy")])
    assert ok.created


DOC = "# Plants\n\nThe aloe needs little water.\n\n- repot in spring\n- bright light\n"


async def test_document_chunks_and_bytes_are_refused_past_their_limits(
    svc: Services, neo4j_driver: Driver
) -> None:
    probe, who, key = limited(svc)
    first = await document_import.import_document(probe, who, Scope.USER, DOC, None, None, None)
    [row], _, _ = neo4j_driver.execute_query(
        "MATCH (c:Chunk {scope_key: $k}) RETURN count(c) AS n", k=key
    )
    chunks = int(row["n"])
    assert first is not None
    assert chunks >= 4
    size = len(DOC.encode())

    by_chunks = replace(svc, settings=svc.settings.replace(max_scope_chunks=chunks + 1))
    before = snapshot(neo4j_driver, key)
    with pytest.raises(QuotaExceeded) as refused:
        await document_import.import_document(by_chunks, who, Scope.USER, DOC, None, None, None)
    assert refusal(refused) == {
        "plane": "chunks",
        "limit": chunks + 1,
        "usage": chunks,
        "after": 2 * chunks,
    }
    assert snapshot(neo4j_driver, key) == before

    by_bytes = replace(svc, settings=svc.settings.replace(max_scope_document_bytes=size + 20))
    with pytest.raises(QuotaExceeded) as refused:
        await document_import.import_document(by_bytes, who, Scope.USER, DOC, None, None, None)
    assert refusal(refused) == {
        "plane": "documentBytes",
        "limit": size + 20,
        "usage": size,
        "after": 2 * size,
    }
    assert snapshot(neo4j_driver, key) == before
    small = "# Note\n\nok\n"
    await document_import.import_document(by_bytes, who, Scope.USER, small, None, None, None)


async def test_pending_spans_are_refused_past_the_limit_even_by_concurrent_harvests(
    svc: Services, neo4j_driver: Driver
) -> None:
    quota, who, key = limited(svc, max_scope_pending_spans=5)

    async def send(i: int) -> str:
        span = harvest.SpanDraft(f"span {i}", source_id=f"s{i}")
        try:
            await harvest.harvest(quota, who, [span], 1)
        except QuotaExceeded as e:
            return str(e.details["plane"])
        return "accepted"

    answers = await asyncio.gather(*(send(i) for i in range(9)))
    assert sorted(answers) == ["accepted"] * 5 + ["pendingSpans"] * 4
    [row], _, _ = neo4j_driver.execute_query(
        "MATCH (p:PendingSpan {scope_key: $k}) RETURN count(p) AS n", k=key
    )
    assert row["n"] == 5
    # A re-sent span is a duplicate, not a new one: it passes at the limit. (Which five were
    # accepted depends on how the nine raced.)
    first = answers.index("accepted")
    again = harvest.SpanDraft(f"span {first}", source_id=f"s{first}")
    receipt = await harvest.harvest(quota, who, [again], 1)
    assert receipt.duplicates == 1


async def test_notes_are_counted(svc: Services, neo4j_driver: Driver) -> None:
    quota, who, key = limited(svc, max_scope_notes=2)
    for k in ("a", "b"):
        await memory.set_value(quota, who, Scope.USER, k, "v", None, False, None)
    before = snapshot(neo4j_driver, key)
    with pytest.raises(QuotaExceeded) as refused:
        await memory.set_value(quota, who, Scope.USER, "c", "v", None, False, None)
    assert refusal(refused) == {"plane": "notes", "limit": 2, "usage": 2, "after": 3}
    assert snapshot(neo4j_driver, key) == before
    await memory.set_value(quota, who, Scope.USER, "a", "w", None, False, None)  # an overwrite


async def test_a_limit_below_usage_refuses_new_rows_and_deletes_nothing(
    svc: Services, neo4j_driver: Driver
) -> None:
    free, who, key = limited(svc)
    await facts.assert_facts(free, who, Scope.USER, [fact(f"p{i}", "q") for i in range(4)])
    # The counters of an import (bulk writes count nothing) are forgotten: counted again.
    neo4j_driver.execute_query(
        "MATCH (s:Scope {scope_key: $k}) REMOVE s.quota_facts, s.quota_entities", k=key
    )
    tight = replace(svc, settings=svc.settings.replace(max_scope_facts=2))
    before = snapshot(neo4j_driver, key)
    with pytest.raises(QuotaExceeded) as refused:
        await facts.assert_facts(tight, who, Scope.USER, [fact("p9", "q")])
    assert refusal(refused) == {"plane": "facts", "limit": 2, "usage": 4, "after": 5}
    after = snapshot(neo4j_driver, key)
    assert after == before
    assert len(after[2]) == 4
    [same] = await facts.assert_facts(tight, who, Scope.USER, [fact("p0", "q")])
    assert not same.created


USAGE = "query($s: Scope!) { usage(scope: $s) { scope planes { plane used limit setting } } }"


def test_usage_over_graphql_and_the_cli(
    gql: Gql, token: Callable[..., str], tenant: str, live_server_url: str
) -> None:
    raw = token(tenant, f"usage-{uuid.uuid4().hex[:6]}")
    set_note = 'mutation { memorySet(scope: USER, key: "u/a", value: "hello") { key } }'
    assert "errors" not in gql(set_note, raw)
    body = gql(USAGE, raw, s="USER")
    assert "errors" not in body, body
    planes = {p["plane"]: p for p in body["data"]["usage"]["planes"]}
    assert set(planes) == {
        "noteBytes",
        "versions",
        "notes",
        "documentBytes",
        "chunks",
        "facts",
        "entities",
        "pendingSpans",
        "sqlBytes",
    }
    assert planes["notes"] == {
        "plane": "notes",
        "used": 1,
        "limit": 1_000_000,
        "setting": "PALIMPSEST_MAX_SCOPE_NOTES",
    }
    assert planes["noteBytes"]["used"] == len("u/a") + len('"hello"')
    assert planes["facts"]["used"] == 0

    env = {k: v for k, v in os.environ.items() if k != "PALIMPSEST_RUN_TOKEN"}
    env |= {"PALIMPSEST_RUN_TOKEN": raw, "PALIMPSEST_SERVER_URL": live_server_url}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), "usage", "--scope", "USER"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["scope"] == "USER"
    assert printed["planes"]["notes"] == {
        "used": 1,
        "limit": 1_000_000,
        "setting": "PALIMPSEST_MAX_SCOPE_NOTES",
    }


async def test_counters_raised_with_the_lock_stay_the_exact_counts(
    svc: Services, neo4j_driver: Driver
) -> None:
    # The first counting write of each plane counts exactly; the next ones raise the known
    # bounds in the statement that takes the lock: the bounds stay equal to the counts.
    quota, who, key = limited(svc, max_scope_notes=10, max_scope_facts=10)
    for k in ("a", "b", "c"):
        await memory.set_value(quota, who, Scope.USER, k, "v", None, False, None)
    await memory.set_value(quota, who, Scope.USER, "a", "w", None, False, None)  # no new note
    await facts.assert_facts(quota, who, Scope.USER, [fact("ann", "bob")])
    await facts.assert_facts(quota, who, Scope.USER, [fact("ann", "cy"), fact("bob", "cy")])
    [row], _, _ = neo4j_driver.execute_query(
        "MATCH (s:Scope {scope_key: $k}) RETURN s.quota_notes AS notes, "
        "s.quota_facts AS facts, s.quota_entities AS entities",
        k=key,
    )
    assert (row["notes"], row["facts"], row["entities"]) == (3, 3, 3)
