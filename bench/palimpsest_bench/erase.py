"""``palimpsest bench erase``: erase one person among many, and prove it from outside.

A fresh tenant gets ``users`` + 1 people, each with data in every plane, loaded through the
same resolvers as the API: key/value entries, documents of paragraphs, facts quoting their
chunks, facts placed in the tenant from their chunks, a sourceless tenant fact, one tenant
fact every person attests (so it has a source per person), a SQL database and pending spans.
Every string of a person holds their marker word. Then one person is erased, and:

- ``rows_before``/``rows_after``: nodes and relationships of the tenant plus SQL rows of
  every person's database, counted by Cypher and sqlite3, not through the API;
- ``erased``: ``rows_before - rows_after``; the receipt's own counts are under ``receipt``
  (its ``rows`` leave out relationships, a document's root chunk, the scope record and SQL
  rows, which it counts as databases and bytes);
- ``left_of_user``: rows anywhere in the database carrying the person's scope key (as scope,
  origin or writer) or their user id as owner, plus rows of the WHOLE database with any
  string property holding their marker, plus their SQL files left on disk, plus ``search``
  hits holding their marker, from their own scope, the tenant's and another person's;
- ``other_users_changed``: people whose rows (every property of every node and relationship
  of their scope, their sources and sourceless facts in the tenant, their SQL rows) differ.

The tenant is erased person by person afterwards (``--keep`` leaves it).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from neo4j import AsyncDriver, AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.cypher import export as xq
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Principal, Role, Scope
from palimpsest.identity.scopes import resolve_scope, scope_key
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.documents.importing import DocumentDraft, import_documents
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.erasure.jobs import Receipt
from palimpsest.resolvers.facts.ledger import time_view
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.recall.planner import RecallRequest, recall
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import ontology
from palimpsest.runtime import open_services
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef
from palimpsest.sqlmem import SqlStatement
from palimpsest.sqlmem.core import dump
from palimpsest_bench.common import gather_limited

ONTOLOGY = "# Tenant ontology\nstatus: confirmed\n\n## service\nscope: tenant\n"
ALL = frozenset({Scope.AGENT, Scope.USER, Scope.TENANT})

# Observation from outside the server: the harness's own driver, whole-database reads.
TENANT_ROWS = """
MATCH (n) WHERE n.tenant_id = $tenant
RETURN count(n) + sum(COUNT { (n)-[]->() }) AS rows
"""
LEFT_OF_KEY = """
CALL () { MATCH (n) WHERE n.scope_key = $key OR n.origin_key = $key OR n.writer_key = $key
          OR n.owner_id = $user OR n.user_id = $user RETURN count(n) AS c
  UNION ALL MATCH ()-[r]->() WHERE r.scope_key = $key OR r.writer_key = $key
          RETURN count(r) AS c }
RETURN sum(c) AS n
"""
WITH_MARKER = """
CALL () { MATCH (n) WHERE any(k IN keys(n) WHERE n[k] IS :: STRING AND n[k] CONTAINS $m)
          RETURN count(n) AS c
  UNION ALL MATCH ()-[r]->() WHERE any(k IN keys(r) WHERE r[k] IS :: STRING AND r[k] CONTAINS $m)
          RETURN count(r) AS c }
RETURN sum(c) AS n
"""
# Each person's rows keyed by whose they are: their scope, and their share of the tenant.
OWNED_ROWS = """
CALL () {
  MATCH (n) WHERE n.tenant_id = $tenant AND n.scope_key IN $keys
  RETURN n.scope_key AS owner, labels(n) AS kind, properties(n) AS props
  UNION ALL
  MATCH (n)-[r]->() WHERE n.tenant_id = $tenant AND r.scope_key IN $keys
  RETURN r.scope_key AS owner, [type(r)] AS kind, properties(r) AS props
  UNION ALL
  MATCH (x:Source {scope_key: $tenant_key}) WHERE x.origin_key IN $keys
  RETURN x.origin_key AS owner, ['Source'] AS kind, properties(x) AS props
  UNION ALL
  MATCH ()-[f:FACT {scope_key: $tenant_key}]->() WHERE f.writer_key IN $keys
  RETURN f.writer_key AS owner, ['FACT'] AS kind, properties(f) AS props
}
RETURN owner, kind, props
"""
CLEAN_TENANT = "MATCH (n) WHERE n.tenant_id = $tenant DETACH DELETE n"


@dataclass(frozen=True)
class Person:
    user: str
    marker: str
    who: Principal
    key: str


async def run(
    settings: Settings,
    users: int,
    scale: int,
    keep: bool,
    say: Callable[[str], None],
) -> dict[str, Any]:
    tenant = f"bench-erase-{uuid.uuid4().hex[:8]}"
    async with open_services(settings) as svc:
        driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
        try:
            return await _run(svc, driver, tenant, users, scale, keep, say)
        finally:
            await driver.close()


async def _run(
    svc: Services,
    driver: AsyncDriver,
    tenant: str,
    users: int,
    scale: int,
    keep: bool,
    say: Callable[[str], None],
) -> dict[str, Any]:
    admin = _principal(tenant, "bench-admin", admin=True)
    await ontology.set_ontology(svc, admin, ONTOLOGY)
    people = [_person(tenant, i) for i in range(users + 1)]
    target, others = people[-1], people[:-1]
    started = time.perf_counter()
    say(f"loading {len(people)} people into {tenant} ...")
    # The target comes last, so the fact everyone attests was written by someone else.
    await gather_limited([_loader(svc, p, scale) for p in others], 4)
    await _load(svc, target, scale)
    load_seconds = time.perf_counter() - started
    rows_before = await _rows(svc, driver, tenant, people)
    say(f"{rows_before} rows loaded in {load_seconds:.0f} s; fingerprinting ...")
    before = await _fingerprints(svc, driver, tenant, others)

    say("erasing one person ...")
    started = time.perf_counter()
    receipt = await erasure.erase_user(svc, admin, target.user)
    seconds = time.perf_counter() - started

    rows_after = await _rows(svc, driver, tenant, people)
    after = await _fingerprints(svc, driver, tenant, others)
    left = await _left_of(svc, driver, target, others[0])
    result = {
        "users": len(people),
        "rows_before": rows_before,
        "rows_after": rows_after,
        "erased": rows_before - rows_after,
        "other_users_changed": sum(before[p.key] != after[p.key] for p in others),
        "seconds": round(seconds, 2),
        "left_of_user": left,
        "receipt": {**_counts(receipt), "rows": receipt.removed.total_rows()},
        "batch": svc.settings.queue.erasure_batch,
        "load_seconds": round(load_seconds, 1),
    }
    if not keep:
        say("erasing everyone else ...")
        for p in others:
            await erasure.erase_user(svc, admin, p.user)
        await driver.execute_query(CLEAN_TENANT, tenant=tenant)
    return result


def _principal(tenant: str, user: str, *, admin: bool = False) -> Principal:
    return Principal(
        tenant_id=tenant,
        user_id=user,
        agent_name="bench",
        session_id="bench-session",
        run_id=f"run-{user}",
        model=None,
        roles=frozenset({Role.ADMIN}) if admin else frozenset(),
        memory_scopes=ALL,
        sql_scopes=ALL,
        isolated=False,
    )


def _person(tenant: str, i: int) -> Person:
    marker = f"zq{uuid.uuid4().hex[:12]}9"  # a digit last: stemming leaves the term whole
    user = f"user{i}-{marker}"
    return Person(user, marker, _principal(tenant, user), scope_key(tenant, Scope.USER, user))


def _loader(svc: Services, p: Person, scale: int) -> Callable[[], Awaitable[None]]:
    return lambda: _load(svc, p, scale)


async def _load(svc: Services, p: Person, scale: int) -> None:
    """About 5 x ``scale`` rows for one person, in every plane."""
    m = p.marker
    for i in range(scale // 5):
        value = {"note": f"{m} note {i}", "n": i}
        await memory.set_value(svc, p.who, Scope.USER, f"notes/{i}", value, None, i % 4 == 0, None)
    paragraphs = "\n\n".join(
        f"Paragraph {j} of {m}: the ledger-{m} {j} runs." for j in range(scale // 3)
    )
    drafts = [DocumentDraft(f"# {m} document {d}\n\n{paragraphs}\n", f"{m} {d}") for d in range(3)]
    docs = await import_documents(svc, p.who, Scope.USER, drafts)
    chunks = [c for d in docs for c in d.chunks if c.type == "paragraph"]
    own = [
        FactDraft(
            EntityRef("person", f"{m} contact {i}"),
            "said",
            None,
            f"{m} words {i}",
            source=SourceRef(chunks[i % len(chunks)].id, 0, 9),
        )
        for i in range(scale // 5)
    ]
    placed = [
        FactDraft(
            EntityRef("service", f"ledger-{m}-{i}"),
            "runs on",
            None,
            f"{m} cluster",
            source=SourceRef(chunks[i].id, 0, 9),
        )
        for i in range(5)
    ]
    shared = FactDraft(
        EntityRef("service", "payments"),
        "runs on",
        None,
        "rails",
        source=SourceRef(chunks[-1].id, 0, 9),
    )
    await ontology.assert_placed(svc, p.who, Scope.USER, own, place=False)
    await ontology.assert_placed(svc, p.who, Scope.USER, [*placed, shared], place=True)
    sourceless = FactDraft(EntityRef("service", f"{m} tool"), "owned by", None, f"{m} team")
    await ontology.assert_placed(svc, p.who, Scope.TENANT, [sourceless], place=False)
    ref = resolve_scope(p.who, Scope.USER)
    await svc.sql.execute(
        ref, [SqlStatement("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")]
    )
    rows = [
        SqlStatement("INSERT INTO notes (body) VALUES (?)", [f"{m} row {i}"]) for i in range(scale)
    ]
    for i in range(0, len(rows), 100):
        await svc.sql.execute(ref, rows[i : i + 100])
    spans = [
        {"props": {"id": uuid.uuid4().hex, "status": s, "text": f"{m} span {i}"}}
        for i, s in enumerate(["queued", "dead", "leased"] * (scale // 30 or 1))
    ]
    await svc.db.scoped(ref).write(xq.IMPORT_SPANS, {"rows": spans})


async def _rows(svc: Services, driver: AsyncDriver, tenant: str, people: list[Person]) -> int:
    records, _, _ = await driver.execute_query(TENANT_ROWS, tenant=tenant)
    graph = int(records[0]["rows"])
    sql = 0
    for p in people:
        sql += sum(1 for r in await _sql_rows(svc, p) if r["kind"] == "sql_row")
    return graph + sql


async def _sql_rows(svc: Services, p: Person) -> list[dict[str, Any]]:
    path = svc.settings.home / "sql" / f"{p.key}.db"
    try:
        return await asyncio.to_thread(dump.dump, path)
    except sqlite3.Error:
        return []


async def _fingerprints(
    svc: Services, driver: AsyncDriver, tenant: str, people: list[Person]
) -> dict[str, str]:
    keys = [p.key for p in people]
    tenant_key = scope_key(tenant, Scope.TENANT, tenant)
    rows: dict[str, list[str]] = {k: [] for k in keys}
    records, _, _ = await driver.execute_query(
        OWNED_ROWS, tenant=tenant, keys=keys, tenant_key=tenant_key
    )
    for r in records:
        rows[r["owner"]].append(repr((sorted(r["kind"]), sorted(r["props"].items()))))
    for p in people:
        rows[p.key].append(repr(await _sql_rows(svc, p)))
    return {k: hashlib.sha256("\n".join(sorted(v)).encode()).hexdigest() for k, v in rows.items()}


async def _left_of(
    svc: Services, driver: AsyncDriver, target: Person, other: Person
) -> dict[str, int]:
    keyed, _, _ = await driver.execute_query(LEFT_OF_KEY, key=target.key, user=target.user)
    marked, _, _ = await driver.execute_query(WITH_MARKER, m=target.marker)
    base = svc.settings.home / "sql" / target.key
    files = [f"{base}.db", f"{base}.db-wal", f"{base}.db-shm", f"{base}.json"]
    hits = 0
    for who, scope in (
        (target.who, Scope.USER),
        (other.who, Scope.TENANT),
        (other.who, Scope.USER),
    ):
        req = RecallRequest(
            query=f"{target.marker} ledger",
            top_k=50,
            sources=frozenset(Source),
            view=time_view(svc, None, None),
        )
        found = await recall(svc, who, [scope], req)
        hits += sum(target.marker in h.text for h in found.hits)
    return {
        "rows_with_key": int(keyed[0]["n"]),
        "rows_with_marker": int(marked[0]["n"]),
        "sql_files": await asyncio.to_thread(lambda: sum(os.path.exists(f) for f in files)),
        "search_hits": hits,
    }


def _counts(r: Receipt) -> dict[str, int]:
    c = r.removed
    return {
        "entries": c.entries,
        "documents": c.documents,
        "chunks": c.chunks,
        "entities": c.entities,
        "facts": c.facts,
        "fact_sources": c.fact_sources,
        "sql_databases": c.sql_databases,
        "sql_bytes": c.sql_bytes,
        "spans": c.spans,
        "attempts": r.attempts,
    }
