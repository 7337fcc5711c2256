"""Retention sweep throughput (``palimpsest bench sweep``): rows removed per second.

A fresh tenant's ``users`` user scopes each get ``keys`` keys written ``versions`` times
(``versions - 1`` past versions per key), ``expired`` notes with a one-second TTL,
``deleted`` deleted keys (a past version and a tombstone each), and ``documents`` documents
edited ``edits`` times with ``updateChunk`` (a past revision and a chunk version each),
through the resolvers, in process, with the hash embedder. The tenant's policy is then set
to one-second windows and the same walk ``palimpsest sweep --tenant`` runs is timed, at the
configured batch size. Counters are checked exact afterwards, and the people are erased.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from neo4j import AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.cypher.quotas import PAST_VERSIONS
from palimpsest.identity import Principal, Scope
from palimpsest.identity.principal import console_operator
from palimpsest.identity.scopes import scope_key
from palimpsest.jobs.sweeper import walk
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.cycle.sweep import Swept
from palimpsest.resolvers.documents import catalog as documents
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import retention
from palimpsest.runtime import open_services
from palimpsest_bench.common import HashEmbedder, principal

COUNTERS = (
    """
MATCH (s:Scope {scope_key: $key})
RETURN s.note_versions = COUNT { MATCH (v:MemoryVersion {scope_key: $key}) } AND
       s.memory_bytes = COLLECT { MATCH (m:Memory {scope_key: $key})
                                  RETURN coalesce(sum(m.bytes), 0) AS b }[0] AND
       coalesce(s.quota_versions, 0) = """
    + PAST_VERSIONS
    + """ AS exact,
       """
    + PAST_VERSIONS
    + """ AS left
"""
)


def run(
    settings: Settings,
    users: int = 4,
    keys: int = 50,
    versions: int = 10,
    expired: int = 50,
    deleted: int = 25,
    documents: int = 0,
    edits: int = 10,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    shape = (users, keys, versions, expired, deleted, documents, edits)
    return asyncio.run(_run(settings, *shape, say or (lambda _: None)))


async def _run(
    settings: Settings,
    users: int,
    keys: int,
    versions: int,
    expired: int,
    deleted: int,
    docs: int,
    edits: int,
    say: Callable[[str], None],
) -> dict[str, Any]:
    tenant = f"bench-sweep-{uuid.uuid4().hex[:8]}"
    people = [principal(tenant, f"user-{u}") for u in range(users)]
    admin = console_operator(tenant)
    async with open_services(settings) as opened:
        svc = replace(
            opened, embedder=HashEmbedder(opened.embedder.model_name, opened.embedder.dimensions)
        )
        try:
            say(f"writing {users} scopes x ({keys} keys x {versions}, {expired} expiring, "
                f"{deleted} deleted)")  # fmt: skip
            started = time.perf_counter()
            for who in people:
                for v in range(versions):
                    for k in range(keys):
                        await _set(svc, who, f"k/{k}", v, None)
                for k in range(expired):
                    await _set(svc, who, f"ttl/{k}", k, 1)
                for k in range(deleted):
                    await _set(svc, who, f"del/{k}", k, None)
                    await memory.delete(svc, who, Scope.USER, f"del/{k}")
                for d in range(docs):
                    await _document(svc, who, d, edits)
            load_seconds = time.perf_counter() - started
            await retention.set_retention_policy(svc, admin, 1, 1, None)
            await asyncio.sleep(1.5)
            say(f"sweeping (batches of {settings.queue.sweep_batch_size})")
            totals = Swept()
            started = time.perf_counter()
            finished = await walk(svc, totals, asyncio.Event(), tenant)
            seconds = time.perf_counter() - started
            assert finished
            exact, left = await _check(settings, tenant, people)
        finally:
            for who in people:
                assert who.user_id is not None
                await erasure.erase_user(svc, admin, who.user_id)
    return {
        "sweep": {
            "scopes": users,
            "batch_size": settings.queue.sweep_batch_size,
            "load_seconds": round(load_seconds, 2),
            "swept": totals.as_dict(),
            "seconds": round(seconds, 3),
            "rows_per_second": round(totals.rows / seconds, 1),
            "ms_per_batch": round(1000 * seconds / max(totals.batches, 1), 3),
            "counters_exact": exact,
            "versions_left": left,
        }
    }


async def _set(svc: Services, who: Principal, key: str, value: int, ttl: int | None) -> None:
    await memory.set_value(svc, who, Scope.USER, key, value, ttl, False, None)


async def _document(svc: Services, who: Principal, d: int, edits: int) -> None:
    text = f"# Document {d}\n\nFirst paragraph.\n\nSecond paragraph.\n"
    doc = await document_import.import_document(svc, who, Scope.USER, text, None, None, None)
    chunk = next(c for c in doc.chunks if c.text.startswith("First"))
    for e in range(edits):
        await documents.update_chunk(svc, who, Scope.USER, chunk.id, f"Edit {e}.\n", e + 1)


async def _check(settings: Settings, tenant: str, people: list[Principal]) -> tuple[bool, int]:
    driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
    exact, left = True, 0
    async with driver:
        for who in people:
            key = scope_key(tenant, Scope.USER, who.user_id or "")
            [row], _, _ = await driver.execute_query(COUNTERS, key=key, scope_key=key)
            exact = exact and bool(row["exact"])
            left += int(row["left"])
    return exact, left
