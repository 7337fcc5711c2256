"""The full-text leg on each engine, interleaved on one scope: ``palimpsest-bench
text-engines``.

One scope of ``rows`` chunks is written straight to the graph with stored terms drawn from a
Zipf vocabulary (no embeddings: only the full-text leg runs), beside its statistics computed
here. Each query (two or three terms) runs the leg on the Cypher engine and on the procedure
engine (``cypher/extension.py``) in turn, in one read transaction each, and the answers are
compared whole (pool, scores to the bit, dropped rows): ``identical_pools`` is the share of
queries where they agree. Times are the leg's wall time in this process, round trips
included. The scope is deleted afterwards.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import ScopedTx, Statement
from palimpsest.cypher.extension import Engine
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Scope, ScopeRef, resolve_scope
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest_bench.common import principal

Say = Callable[[str], None]
VOCABULARY = 3000
PAGE = 5000
WRITE = Statement(
    "BENCH_TEXT_ROWS",
    """UNWIND $rows AS r
CREATE (:Chunk {scope_key: $scope_key, id: r.id, ft: r.ft, ft_tf: r.tf, ft_len: r.len,
                text: 't', index: 0, created_at: datetime()})""",
)
ERASE = Statement(
    "BENCH_TEXT_ERASE",
    """MATCH (c:Chunk {scope_key: $scope_key})
WITH c LIMIT 5000
DETACH DELETE c
RETURN count(*) AS n""",
)
BASE = {"prefix": "", "known_at": None}


def _words(rng: random.Random) -> list[str]:
    weights = [1.0 / (i + 1) for i in range(VOCABULARY)]
    return [f"w{i}" for i in rng.choices(range(VOCABULARY), weights, k=rng.randint(20, 60))]


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


async def run(
    settings: Settings, rows: int, queries: int, pool: int, seed: int, say: Say
) -> dict[str, Any]:
    rng = random.Random(seed)
    async with open_services(settings) as svc:
        if svc.search_engine.name != "procedure":
            raise SystemExit(f"the server has no usable extension: {svc.search_engine.reason}")
        who = principal(f"text-engines-{uuid.uuid4().hex[:8]}", "bench")
        ref = resolve_scope(who, Scope.USER)
        db = svc.db.scoped(ref)
        df: Counter[str] = Counter()
        length = 0
        started = time.monotonic()
        for start in range(0, rows, PAGE):
            page = []
            for i in range(start, min(rows, start + PAGE)):
                bag = Counter(_words(rng))
                stored = fulltext.Stored.of(bag)
                df.update(bag.keys())
                length += stored.length
                page.append({"id": f"{ref.scope_key[:8]}-{i:07d}", "ft": stored.ft,
                             "tf": stored.tf, "len": stored.length})  # fmt: skip
            await db.write(WRITE, {"rows": page})
        say(f"wrote {rows} rows in {time.monotonic() - started:.0f}s")
        stats = KindStats(rows, length, dict(df))
        try:
            return await _measure(svc, ref, stats, rows, queries, pool, rng, say)
        finally:
            while (await db.write(ERASE))[0]["n"]:
                pass


async def _measure(
    svc: Services, ref: ScopeRef, stats: KindStats, rows: int, queries: int, pool: int,
    rng: random.Random, say: Say,
) -> dict[str, Any]:  # fmt: skip
    times: dict[Engine, list[float]] = {"cypher": [], "procedure": []}
    same = 0
    base = {**BASE, "now": svc.clock()}
    for n in range(queries):
        terms = sorted({f"w{rng.randint(0, 300)}" for _ in range(rng.randint(2, 3))})
        answers = []
        for engine in ("cypher", "procedure") if n % 2 == 0 else ("procedure", "cypher"):

            async def work(
                tx: ScopedTx, engine: Engine = engine, terms: list[str] = terms
            ) -> legs.Ranked:
                return await legs.fulltext_leg(
                    tx, Source.DOCUMENTS, terms, stats, pool, base, 1.2, 0.75, engine=engine
                )

            began = time.perf_counter()
            answer = await svc.db.scoped(ref).read_tx(work)
            times[engine].append((time.perf_counter() - began) * 1000)
            answers.append(answer)
        a, b = answers
        same += (a.ids, a.scores, a.dropped) == (b.ids, b.scores, b.dropped)
    say(f"{queries} queries on each engine")
    return {
        "rows": rows,
        "queries": queries,
        "pool": pool,
        "identical_pools": same / queries,
        **{
            f"{engine}_leg_ms": {
                "p50": round(statistics.median(values), 2),
                "p95": round(_percentile(values, 0.95), 2),
            }
            for engine, values in times.items()
        },
    }
