"""The cost of keeping every revision of a document (docs/decisions/0008-document-revisions.md).

Two user scopes hold the same ``chunks``-chunk document with the same final text: ``single``
imported it once (one revision), ``edited`` imported the first text and then wrote ``edits``
revisions, alternately a chunk edit (``updateChunk``) and a re-import to the same path with
one paragraph changed, each changing a different paragraph. Measured in one run, on the
configured Neo4j, in process (resolvers, no HTTP), with the deterministic hash embedder:

- ``storage``: nodes and chunk relationships of each scope; the logical bytes (strings as
  UTF-8, numbers, times and each vector element as 8) of the closed chunk versions and the
  revision records; ``bytes_per_unchanged_chunk_revision``: what the unchanged chunks of
  ``edited`` hold beyond the same chunks (by position) of ``single``, per unchanged chunk
  and revision (target about 0; a one-off ``parent_id`` a re-import stores on present
  chunks is in it), and ``marginal_...``: what they grew by from the second revision to the
  last, per unchanged chunk and revision;
- ``write``: mean time of each kind of revision, and the storage amplification of one: the
  bytes a revision adds over the bytes of the chunk it changed;
- ``present_read``: p50/p95 of ``document(id)`` in both scopes, interleaved (ratio edited /
  single); ``known_at_read``: ``document(id, knownAt)`` at the middle revision's time, and
  ``revision_read``: ``document(id, revision: 1)``, each with its p95 ratio to the present.

The two people are erased afterwards.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from neo4j import AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.identity import Principal, Scope
from palimpsest.identity.principal import console_operator
from palimpsest.identity.scopes import scope_key
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.documents import catalog as documents
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest_bench.common import HashEmbedder, principal
from palimpsest_bench.versions import WORDS, _ms, _p, _pcts

PATH = "/bench/revisions.md"
NODES = """MATCH (n) WHERE n.scope_key = $key
RETURN labels(n)[0] AS label, count(n) AS n ORDER BY label"""
EDGES = """MATCH (c:Chunk {scope_key: $key})-[r]-() WHERE r.scope_key = $key
RETURN count(DISTINCT r) AS n"""
OF_LABEL = {
    "Chunk": "MATCH (n:Chunk {scope_key: $key}) RETURN properties(n) AS p",
    "ChunkVersion": "MATCH (n:ChunkVersion {scope_key: $key}) RETURN properties(n) AS p",
    "DocumentRevision": "MATCH (n:DocumentRevision {scope_key: $key}) RETURN properties(n) AS p",
}


def run(
    settings: Settings,
    chunks: int = 200,
    edits: int = 20,
    reads: int = 200,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    return asyncio.run(_run(settings, chunks, edits, reads, say or (lambda _: None)))


async def _run(
    settings: Settings, chunks: int, edits: int, reads: int, say: Callable[[str], None]
) -> dict[str, Any]:
    tenant = f"bench-docrev-{uuid.uuid4().hex[:8]}"
    single, edited = principal(tenant, "single"), principal(tenant, "edited")
    async with open_services(settings) as opened:
        svc = replace(
            opened,
            embedder=HashEmbedder(opened.embedder.model_name, opened.embedder.dimensions),
        )
        try:
            return await _measure(svc, settings, tenant, single, edited, chunks, edits, reads, say)
        finally:
            admin = console_operator(tenant)
            for who in (single, edited):
                assert who.user_id is not None
                await erasure.erase_user(svc, admin, who.user_id)


def _markdown(paragraphs: list[str]) -> str:
    return "# Bench document\n\n" + "\n\n".join(paragraphs) + "\n"


async def _measure(
    svc: Services,
    settings: Settings,
    tenant: str,
    single: Principal,
    edited: Principal,
    chunks: int,
    edits: int,
    reads: int,
    say: Callable[[str], None],
) -> dict[str, Any]:
    paragraphs = [
        f"Paragraph {i}: the {WORDS[i % 10]} by the {WORDS[(i // 10) % 10]}, written for the "
        "revision benchmark so that every chunk has a sentence of its own."
        for i in range(chunks - 1)
    ]
    say(f"importing a {chunks}-chunk document and writing {edits} revisions of it")
    started = time.perf_counter()
    first = await document_import.import_document(
        svc, edited, Scope.USER, _markdown(paragraphs), None, PATH, None
    )
    import_s = time.perf_counter() - started
    doc_id = first.summary.id
    by_text = {c.text: c for c in first.chunks}
    rng = random.Random(7)
    targets = rng.sample(range(len(paragraphs)), edits)
    took: dict[str, list[float]] = {"chunk_edit": [], "reimport": []}
    for n, i in enumerate(targets):
        old = paragraphs[i]
        paragraphs[i] = f"Paragraph {i}, edited in revision {n + 2}: the {WORDS[n % 10]} moved."
        started = time.perf_counter()
        if n % 2 == 0:
            chunk = by_text[old + "\n"] if old + "\n" in by_text else by_text[old]
            await documents.update_chunk(
                svc, edited, Scope.USER, chunk.id, paragraphs[i] + "\n", chunk.revision
            )
        else:
            await document_import.import_document(
                svc, edited, Scope.USER, _markdown(paragraphs), None, PATH, None
            )
        took["reimport" if n % 2 else "chunk_edit"].append(time.perf_counter() - started)
        if n == 1:  # after a chunk edit and a re-import
            early = await _chunk_bytes(settings, tenant, edited)
    final = _markdown(paragraphs)
    twin = await document_import.import_document(svc, single, Scope.USER, final, None, PATH, None)
    history = await document_revisions.history(svc, edited, Scope.USER, doc_id, 100, None)
    assert len(history.items) == edits + 1
    middle: datetime = history.items[len(history.items) // 2].created_at
    present = await documents.get_document(svc, edited, Scope.USER, doc_id)
    assert present is not None
    assert document_revisions.export(present) == final

    say("measuring reads")
    times: dict[str, list[float]] = {k: [] for k in ("single", "edited", "known_at", "rev1")}

    async def timed(bucket: str, work: Awaitable[Any]) -> None:
        started = time.perf_counter()
        await work
        times[bucket].append(time.perf_counter() - started)

    for _ in range(reads):
        await timed("single", documents.get_document(svc, single, Scope.USER, twin.summary.id))
        await timed("edited", documents.get_document(svc, edited, Scope.USER, doc_id))
        await timed(
            "known_at", documents.get_document(svc, edited, Scope.USER, doc_id, None, middle)
        )
        await timed("rev1", documents.get_document(svc, edited, Scope.USER, doc_id, 1))

    storage = await _storage(settings, tenant, single, edited, edits, early)
    per_edit = storage.pop("added_bytes") / edits
    mean_chunk = storage.pop("mean_chunk_bytes")
    return {
        "document_revisions": {
            "chunks": first.summary.chunk_count,
            "revisions": {"single": 1, "edited": edits + 1},
            "storage": storage,
            "write": {
                "first_import_ms": _ms(import_s),
                "chunk_edit_ms": _ms(statistics.mean(took["chunk_edit"])),
                "reimport_ms": _ms(statistics.mean(took["reimport"])),
                "bytes_per_revision": round(per_edit),
                "amplification": round(per_edit / mean_chunk, 3),
            },
            "present_read": {
                "single": _pcts(times["single"]),
                "edited": _pcts(times["edited"]),
                "p50_ratio": round(_p(times["edited"], 50) / _p(times["single"], 50), 3),
                "p95_ratio": round(_p(times["edited"], 95) / _p(times["single"], 95), 3),
            },
            "known_at_read": {
                **_pcts(times["known_at"]),
                "p95_ratio_to_present": round(
                    _p(times["known_at"], 95) / _p(times["edited"], 95), 3
                ),
            },
            "revision_read": {
                **_pcts(times["rev1"]),
                "p95_ratio_to_present": round(_p(times["rev1"], 95) / _p(times["edited"], 95), 3),
            },
        }
    }


async def _chunk_bytes(settings: Settings, tenant: str, who: Principal) -> dict[str, int]:
    """Logical bytes of each current chunk of ``who``'s scope, by id."""
    driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
    async with driver:
        key = scope_key(tenant, Scope.USER, who.user_id or "")
        records, _, _ = await driver.execute_query(OF_LABEL["Chunk"], key=key)
    return {r["p"]["id"]: _bytes(dict(r["p"])) for r in records}


async def _storage(
    settings: Settings,
    tenant: str,
    single: Principal,
    edited: Principal,
    edits: int,
    early: dict[str, int],
) -> dict[str, Any]:
    driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
    found: dict[str, dict[str, Any]] = {}
    async with driver:
        for name, who in (("single", single), ("edited", edited)):
            key = scope_key(tenant, Scope.USER, who.user_id or "")
            labelled, _, _ = await driver.execute_query(NODES, key=key)
            [edges], _, _ = await driver.execute_query(EDGES, key=key)
            rows: dict[str, Any] = {}
            for label, statement in OF_LABEL.items():
                records, _, _ = await driver.execute_query(statement, key=key)
                rows[label] = [dict(r["p"]) for r in records]
            nodes = {r["label"]: r["n"] for r in labelled}
            found[name] = {"nodes": nodes, "chunk_edges": edges["n"], **rows}
    one, many = found["single"], found["edited"]
    twins = {c["index"]: c for c in one["Chunk"] if c.get("index") is not None}
    unchanged = [c for c in many["Chunk"] if c.get("from_revision", 1) == 1 and "index" in c]
    extra = sum(_bytes(c) - _bytes(twins[c["index"]]) for c in unchanged)
    # What unchanged chunks grew by between the second revision and the last.
    grown = sum(_bytes(c) - early[c["id"]] for c in unchanged)
    marginal = round(grown / (len(unchanged) * (edits - 2)), 3) if edits > 2 else None
    versions = sum(_bytes(v) for v in many["ChunkVersion"])
    record_bytes = sum(_bytes(r) for r in many["DocumentRevision"]) - sum(
        _bytes(r) for r in one["DocumentRevision"]
    )
    shape = {k: {"nodes": v["nodes"], "chunk_edges": v["chunk_edges"]} for k, v in found.items()}
    current = [_bytes(c) for c in many["Chunk"] if "index" in c]
    return {
        **shape,
        "chunk_versions": len(many["ChunkVersion"]),
        "chunk_version_bytes": versions,
        "revision_record_bytes": record_bytes,
        "marginal_bytes_per_unchanged_chunk_revision": marginal,
        "extra_chunk_edges": many["chunk_edges"] - one["chunk_edges"],
        "unchanged_chunk_revisions": len(unchanged) * edits,
        "bytes_per_unchanged_chunk_revision": round(extra / (len(unchanged) * edits), 3)
        if unchanged
        else None,
        "added_bytes": versions + record_bytes,
        "mean_chunk_bytes": statistics.mean(current),
    }


def _bytes(value: Any) -> int:
    """Logical bytes of a stored value: UTF-8 strings, 8 per number or time, 1 per bool."""
    if isinstance(value, dict):
        return sum(len(k.encode()) + _bytes(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_bytes(v) for v in value)
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bool):
        return 1
    return 8
