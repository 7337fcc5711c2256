"""``python -m palimpsest_bench.passage_cost``: what passages cost (docs/notes/beam.md, Passages).

BEAM's dev messages (10,080, a median of about 1,300 characters) as turns of one USER scope,
imported as ``eval beam --via import`` does (one paragraph per message, 100 batch documents),
embedded by ``HashEmbedder`` so the load runs at database speed; then every BEAM question once
as a vector-only and a hybrid ``recall`` in-process. Answers, as JSON: the turns, the vectors
written (chunks' own and passages), the characters stored as passage text, the ingest time,
the on-disk size of the ``passage_embedding`` index (only passages write it) and the search
latency per mode (p50, p95). Run it with the product of the day on the path for the figures
before passages (it then writes none), and with this branch's for after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from neo4j import AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.domain.ranking.fusion import Source
from palimpsest.errors import PalimpsestError
from palimpsest.identity import Scope, resolve_scope
from palimpsest.local.neo4j.manager import credentials
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall.planner import Mode, recall
from palimpsest.runtime import open_services
from palimpsest_bench.beam_data import load_beam
from palimpsest_bench.common import HashEmbedder, principal
from palimpsest_bench.recall_ingest import erase, ingest

OWNER = "all"
COUNTS = """
MATCH (c:Chunk {scope_key: $key}) WHERE c.embedding IS NOT NULL
WITH count(c) AS chunks
OPTIONAL MATCH (p:Passage {scope_key: $key})
RETURN chunks, count(p) AS passages, sum(size(p.text)) AS passage_chars
"""
INDEX_ID = "SHOW INDEXES YIELD name, id WHERE name = $name RETURN id"


def _du(path: Path) -> int:
    if not path.exists():
        return 0
    out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


async def _index_bytes(driver: Any, settings: Settings, name: str) -> int:
    records, _, _ = await driver.execute_query(INDEX_ID, name=name)
    if not records:
        return 0
    home = settings.home / "neo4j" / settings.neo4j.version / "data" / "databases"
    folders = list((home / settings.neo4j.database / "schema" / "index").glob("vector-*"))
    return sum(_du(f / str(records[0]["id"])) for f in folders)


def _quantiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
    }


async def run(data: Path, label: str) -> dict[str, Any]:
    settings = Settings()
    beam = load_beam(data)
    ds = replace(beam.dataset, docs=[replace(d, owner=OWNER) for d in beam.dataset.docs])
    tenant = f"bench-passages-{label}-{uuid.uuid4().hex[:8]}"
    who = principal(tenant, OWNER)
    key = resolve_scope(who, Scope.USER).scope_key
    out: dict[str, Any] = {"label": label, "tenant": tenant}
    async with open_services(settings) as base:
        model = base.embedder
        svc = replace(base, embedder=HashEmbedder(model.model_name, model.dimensions))
        async with AsyncGraphDatabase.driver(
            settings.bolt_uri, auth=credentials(settings)
        ) as driver:
            before = await _index_bytes(driver, settings, "passage_embedding")
            started = time.perf_counter()
            loaded = await ingest(svc, tenant, ds, lambda m: print(m, file=sys.stderr))
            out["ingest_s"] = round(time.perf_counter() - started, 1)
            out["turns"] = loaded.chunks
            records, _, _ = await driver.execute_query(COUNTS, key=key)
            row = records[0]
            out["vectors"] = {"chunks": row["chunks"], "passages": row["passages"]}
            out["passage_chars"] = row["passage_chars"] or 0
            await asyncio.sleep(5)  # the index's files settle after the last commit
            out["passage_index_bytes"] = (
                await _index_bytes(driver, settings, "passage_embedding") - before
            )
        questions = [q.text for q in ds.queries]
        for mode in (Mode.VECTOR, Mode.HYBRID):
            ms: list[float] = []
            for text in questions:
                asked = asks.request_of(
                    svc, asks.Ask(text, top_k=10), frozenset({Source.DOCUMENTS})
                )
                t0 = time.perf_counter()
                await recall(svc, who, [Scope.USER], replace(asked, mode=mode))
                ms.append((time.perf_counter() - t0) * 1000)
            out[f"search_{mode.value}"] = _quantiles(ms)
        print(json.dumps(out, indent=2), flush=True)  # before the clean-up, which may fail
        try:
            await erase(svc, tenant, loaded)
        except PalimpsestError as e:  # a busy database: the bench tenant stays behind
            print(f"erasing {tenant} failed: {e.code}", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--label", default="run")
    args = parser.parse_args()
    asyncio.run(run(args.data, args.label))


if __name__ == "__main__":
    main()
