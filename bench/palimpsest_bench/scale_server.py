"""A Neo4j of the benchmark's own for datasets too large for the shared server (issue 14).

A million chunks must not go into the development server on 7687, which serves everyone's
tests. ``own_server`` runs a separate managed Neo4j the way ``bench faults`` does (its own
``PALIMPSEST_HOME``, the cached jars linked in, its own password and ports: 7699/7486 by
default, so ``bench faults`` on 7698/7485 can run meanwhile), sized for the dataset, and
stops it afterwards. The home is kept, so the dataset loads once and later runs reuse it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from palimpsest.config import Settings
from palimpsest.local import neo4j as neo4j_local
from palimpsest_suites.faults import prepare_home

Say = Callable[[str], None]
TAKEN_BOLT = frozenset({7687, 7698})  # the shared server, and bench faults' server
TAKEN_HTTP = frozenset({7474, 7485})
BOLT_PORT = 7699
HTTP_PORT = 7486


def memory_for(chunks: int, dimensions: int = 384) -> tuple[str, str]:
    """Heap and page cache for ``chunks`` embedded chunks.

    Neo4j keeps each embedding as a property (doubles: 8 bytes x dimensions) in its store,
    served from the page cache; the HNSW vector index (float32 and its graph) and the
    full-text indexes are Lucene files read through the OS cache, outside both. The page
    cache gets the vectors plus three quarters for the rest of the store (the rows' stored
    terms, the range indexes: at 1M chunks the store is ~1.7x the vectors, and a page cache
    of 1.35x left the smaller scopes' searches at p50 55 ms against 40 ms with 1.75x); the heap
    a fixed 2 GB (queries, transaction state of the bulk load), more only for the largest
    sets."""
    vectors = chunks * dimensions * 8
    pagecache_mb = max(512, int(vectors * 1.75 / 2**20))
    heap_mb = 1024 if chunks <= 100_000 else 2048 if chunks <= 500_000 else 3072
    return f"{heap_mb}m", f"{pagecache_mb}m"


def scale_settings(
    home: Path,
    chunks: int,
    bolt_port: int = BOLT_PORT,
    http_port: int = HTTP_PORT,
    source: Settings | None = None,
) -> Settings:
    if bolt_port in TAKEN_BOLT or http_port in TAKEN_HTTP:
        raise ValueError(
            f"the scale server must not use ports {sorted(TAKEN_BOLT | TAKEN_HTTP)} "
            "(the shared server's and bench faults')"
        )
    base = source or Settings()
    heap, pagecache = memory_for(chunks, base.embedding.dimensions)
    return base.replace(
        home=home,
        neo4j_managed=True,
        neo4j_uri=None,
        neo4j_password=None,
        neo4j_bolt_port=bolt_port,
        neo4j_http_port=http_port,
        neo4j_heap=heap,
        neo4j_pagecache=pagecache,
        rate_limit_per_second=0,
        max_scope_chunks=max(base.limits.max_scope_chunks, 2 * chunks),
    )


def disk_bytes(s: Settings) -> dict[str, int]:
    """Bytes on disk of the server's database files and its transaction logs."""
    data = s.neo4j_home / "data"
    found = {"store": 0, "transactions": 0}
    for root, _, files in os.walk(data):
        part = "transactions" if "transactions" in Path(root).parts else "store"
        for name in files:
            with contextlib.suppress(OSError):
                found[part] += (Path(root) / name).stat().st_size
    return found


@contextlib.contextmanager
def own_server(
    source: Settings,
    home: Path,
    chunks: int,
    say: Say,
    bolt_port: int = BOLT_PORT,
    http_port: int = HTTP_PORT,
    keep_running: bool = False,
) -> Iterator[Settings]:
    """Start (or reuse) the scale server in ``home``; stop it on exit unless asked not to,
    and only if this call started it."""
    s = scale_settings(home.resolve(), chunks, bolt_port, http_port, source)
    say(
        f"scale server: home {s.home}, bolt {bolt_port}, http {http_port}, "
        f"heap {s.neo4j.heap}, page cache {s.neo4j.pagecache}"
    )
    started = False
    try:
        if not neo4j_local.status(s).running:
            prepare_home(s, source, say)
            neo4j_local.start(s, say)
            started = True
        yield s
    finally:
        if started and not keep_running and neo4j_local.status(s).running:
            neo4j_local.stop(s, say)
