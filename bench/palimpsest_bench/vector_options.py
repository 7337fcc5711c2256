"""``palimpsest-bench vector-options``: the vector leg's top-10 overlap with the exact in-scope
search, and its cost, per pair of (``PALIMPSEST_RECALL_EXACT_MAX_ROWS``,
``PALIMPSEST_RECALL_ANN_FLOOR``), interleaved query by query on the growth dataset's scopes.

Why: the filtered HNSW index leaves some rows with no way in, so above the exact threshold the
overlap is capped below 1 whatever the floor; the two levers are reading the whole scope from
the index (exact by construction, ``cypher/recall_whole.py``) for larger scopes, or asking the
index for more. Each query runs the product's vector leg (``legs.vector_leg``, in a read
transaction of its own) once per option pair, the pairs' order rotating by query, and is
compared with the exact top 10 (Cypher's exact scan, or numpy over the rebuilt vectors of a
synthetic scope above ``LOCAL_EXACT_ABOVE`` rows). The scopes are the growth run's
(``recall_growth.growth_plan``), loaded by it beforehand; nothing is written.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher import recall as q
from palimpsest.cypher.driver.executor import ScopedTx, Statement
from palimpsest.domain.ranking.fusion import Source
from palimpsest.resolvers.facts import ledger as fr
from palimpsest.resolvers.recall import legs
from palimpsest.runtime import open_services
from palimpsest_bench import exact_local
from palimpsest_bench.common import HashEmbedder
from palimpsest_bench.recall_bench import (
    LOCAL_EXACT_ABOVE,
    POOL,
    TOP_K,
    Progress,
    ids_of,
    overlap,
    percentile,
)
from palimpsest_bench.recall_growth import growth_plan, label
from palimpsest_bench.recall_load import TextGen, load_average

Option = tuple[int, int]  # (exact_max_rows, ann_floor)
# Bench-only: the scope's embedded chunks, as the whole-scope read counts them.
EMBEDDED = Statement(
    "BENCH_SCOPE_EMBEDDED",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.embedding IS NOT NULL
RETURN count(c) AS n
""",
)


def parse_options(text: str) -> list[Option]:
    """``"2000:100,20000:100"`` -> ``[(2000, 100), (20000, 100)]``: exact rows, then floor."""
    out: list[Option] = []
    for part in text.split(","):
        if not part.strip():
            continue
        rows, sep, floor = part.strip().partition(":")
        if not sep or not rows.isdigit() or not floor.isdigit() or int(floor) < 1:
            raise ValueError(f"not an option pair exact_max_rows:floor: {part!r}")
        out.append((int(rows), int(floor)))
    if len(set(out)) != len(out) or not out:
        raise ValueError("give option pairs exact_max_rows:floor, each once")
    return out


def name(option: Option) -> str:
    return f"exact<={option[0]},floor={option[1]}"


@dataclass(slots=True)
class Tally:
    overlaps: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)

    def figures(self) -> dict[str, float]:
        return {
            "overlap": round(sum(self.overlaps) / len(self.overlaps), 4),
            "min_overlap": min(self.overlaps),
            "p50_ms": round(percentile(self.ms, 50), 2),
            "p95_ms": round(percentile(self.ms, 95), 2),
        }


async def run(
    settings: Settings,
    sizes: Sequence[int],
    options: Sequence[Option],
    queries: int,
    say: Progress,
    tenant: str | None = None,
) -> dict[str, Any]:
    """Per size of the (loaded) synthetic growth dataset and per option pair: the vector
    leg's mean top-10 overlap over ``queries`` and its p50/p95 in this process."""
    settings = settings.replace(log_level="WARNING")
    by_size: dict[str, Any] = {}
    async with open_services(settings) as svc:
        hashed = HashEmbedder(svc.embedder.model_name, svc.embedder.dimensions)
        passages = settings.recall.passage_max > 0
        for p in growth_plan(sizes, synthetic=True, tenant=tenant):
            db = svc.db.scoped(p.ref)
            rows = int((await db.read(EMBEDDED))[0]["n"])
            if rows < p.chunks:
                raise SystemExit(f"scope {p.user} holds {rows} rows: load it with the growth run")
            gen = TextGen(f"vector-options-{p.chunks}")
            texts = [gen.query() for _ in range(queries)]
            vectors = hashed.embed(texts)
            view = fr.time_view(svc, None, None)
            if p.chunks > LOCAL_EXACT_ABOVE:
                say(f"{label(p.chunks)}: exact top-{POOL} with numpy ...")
                exact = await exact_local.exact_top(db, hashed, vectors, POOL)
            else:
                exact = []
                for vector in vectors:
                    base = {"vector": vector, "prefix": "", "now": svc.clock(), **view.params()}
                    exact.append(ids_of(await db.read(q.EXACT_CHUNKS, {**base, "k": POOL})))
            tallies = {o: Tally() for o in options}
            load_before = load_average()
            say(f"{label(p.chunks)}: {queries} queries x {len(options)} options ...")
            for i, vector in enumerate(vectors):
                turn = i % len(options)
                base = {"prefix": "", "now": svc.clock(), **view.params()}
                for option in [*options[turn:], *options[:turn]]:

                    async def work(
                        tx: ScopedTx,
                        option: Option = option,
                        v: list[float] = vector,
                        base: dict[str, Any] = base,
                        rows: int = rows,
                    ) -> legs.Ranked:
                        return await legs.vector_leg(
                            tx, Source.DOCUMENTS, v, POOL, base, rows, option[0], option[1],
                            passages=passages,
                        )  # fmt: skip

                    started = time.perf_counter()
                    ranked = await db.read_tx(work)
                    tallies[option].ms.append((time.perf_counter() - started) * 1000)
                    tallies[option].overlaps.append(overlap(ranked.ids[:TOP_K], exact[i]))
            by_size[label(p.chunks)] = {
                "scope_rows": rows,
                **{name(o): t.figures() for o, t in tallies.items()},
                "load_avg_before": load_before,
                "load_avg_after": load_average(),
            }
            say(f"  {label(p.chunks)}: {by_size[label(p.chunks)]}")
    return {
        "benchmark": "vector-options",
        "queries": queries,
        "pool": POOL,
        "options": [name(o) for o in options],
        "by_size": by_size,
    }
