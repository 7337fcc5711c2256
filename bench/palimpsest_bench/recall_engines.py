"""``bench recall-latency --growth --engines procedure,cypher``: each size's searches on each
full-text engine, interleaved on one database.

One API runtime per engine is served in this process (``serve_in_thread``, its settings'
``search_engine`` set to that engine; each checks at start-up that it answers on that
engine), both on the same Neo4j. Each query goes to every engine in turn, the order
alternating, so neither always meets the warmer caches: ``search`` through GraphQL over HTTP
(its time and the stages the API observed, ``fulltext_leg`` being the sum of its full-text
legs), then the product's own plan up to its legs in this process on that engine
(``PoolsPlan``), whose full-text pools are compared whole between the engines: ids in order,
scores to the bit and the rows the filters dropped. ``identical_pools`` is the share of
measured queries where every engine's pools were the first engine's; ``identical_hits`` the
same for the hits GraphQL returned (ids and scores). Ratios are each engine's figure over the
last engine's (``cypher`` in ``procedure,cypher``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Tx
from palimpsest.cypher.extension import Engine, SearchEngine
from palimpsest.domain.ranking import cues
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import ScopeRef
from palimpsest.identity.acting import act_for_user
from palimpsest.resolvers.facts import ledger as fr
from palimpsest.resolvers.recall import timing
from palimpsest.resolvers.recall.fusion import RankedList
from palimpsest.resolvers.recall.plan import RecallPlan, RecallResult
from palimpsest.resolvers.recall.request import RecallRequest
from palimpsest.resolvers.services import Services
from palimpsest.server import serve_in_thread
from palimpsest_bench.recall_bench import POOL, TOP_K, Progress, latency_stats, percentile
from palimpsest_bench.recall_clients import SEARCH_GQL
from palimpsest_bench.recall_latency import StageLog, stage_summary
from palimpsest_bench.recall_load import ScopePlan, cpu_steal_seconds, load_average, stolen_since
from palimpsest_bench.sql import GraphQLClient

K = TypeVar("K", bound=str)
# A full-text pool as compared between engines: per kind, ids best first, scores, dropped.
Pool = tuple[tuple[str, tuple[str, ...], tuple[tuple[str, float], ...], tuple[str, ...]], ...]


def engine_settings(settings: Settings, engine: Engine) -> Settings:
    """The settings of the API that answers on ``engine`` (which refuses to start without
    it: ``procedure`` on a server without the extension)."""
    return settings.replace(search_engine=engine)


def pools_of(lists: Sequence[RankedList]) -> Pool:
    """The full-text legs' pools of one search, as compared between engines."""
    return tuple(
        sorted(
            (
                one.source.value,
                tuple(one.ranked.ids),
                tuple(sorted(one.ranked.scores.items())),
                tuple(sorted(one.ranked.dropped)),
            )
            for one in lists
            if one.leg == "fulltext"
        )
    )


def hits_of(data: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    return tuple((h["id"], h["score"]) for h in data["search"]["hits"])


def fulltext_ms(seen: Mapping[str, float]) -> float:
    """The time of a search's full-text legs (every kind's, summed)."""
    return sum(ms for stage, ms in seen.items() if stage.startswith("fulltext_"))


@dataclass(slots=True)
class PoolsPlan(RecallPlan):
    """The product's recall plan up to its legs, keeping the full-text legs' pools."""

    pools: Pool = ()

    async def finish(
        self, tx: Tx, lists: list[RankedList], question: cues.QuestionCues
    ) -> RecallResult:
        self.pools = pools_of(lists)
        return RecallResult(hits=[], scopes=[r.scope for r in self.refs])


async def text_pools(svc: Services, ref: ScopeRef, query: str) -> Pool:
    request = RecallRequest(
        query=query,
        top_k=TOP_K,
        sources=pure.SEARCH_DEFAULT,
        view=fr.time_view(svc, None, None),
        pool=POOL,
        levers=pure.Levers.of(svc.settings),
    )
    plan = await PoolsPlan.of(svc, act_for_user(ref.tenant_id, ref.owner_id), [ref.scope], request)
    await plan.run()
    return plan.pools


@dataclass(slots=True)
class Tally:
    """One engine's measured queries."""

    total: list[float] = field(default_factory=list)
    fulltext: list[float] = field(default_factory=list)
    stages: list[dict[str, float]] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        stages = stage_summary(self.stages)
        return {
            "p50_ms": round(percentile(self.total, 50), 2),
            "p95_ms": round(percentile(self.total, 95), 2),
            "fulltext_leg_p50_ms": round(percentile(self.fulltext, 50), 2),
            "fulltext_leg_p95_ms": round(percentile(self.fulltext, 95), 2),
            **latency_stats(self.total),
            "stages": stages,
        }


def ratios(by_engine: Mapping[K, Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Each engine's p50, p95 and full-text leg p95 over the last engine's."""
    *others, base = by_engine
    keys = ("p50_ms", "p95_ms", "fulltext_leg_p50_ms", "fulltext_leg_p95_ms")
    return {
        f"{name}/{base}": {
            k: round(by_engine[name][k] / by_engine[base][k], 3) if by_engine[base][k] else None
            for k in keys
        }
        for name in others
    }


@contextlib.contextmanager
def engine_servers(settings: Settings, engines: Sequence[Engine]) -> Iterator[dict[Engine, str]]:
    """One API per engine served in this process, each warmed up; yields their base URLs."""
    with contextlib.ExitStack() as stack:
        yield {
            e: stack.enter_context(serve_in_thread(engine_settings(settings, e))) for e in engines
        }


async def interleaved_run(
    svc: Services,
    urls: Mapping[Engine, str],
    engines: Sequence[Engine],
    picks: Sequence[tuple[ScopePlan, str]],
    tokens: Mapping[str, str],
    warmup: int,
    say: Progress,
) -> dict[str, Any]:
    """Every query on every engine in turn (the order alternating); per engine the search's
    p50/p95 and its full-text legs', and the share of queries whose pools (and hits) agree."""
    tallies = {e: Tally() for e in engines}
    runtimes = {e: replace(svc, search_engine=SearchEngine(e, "bench")) for e in engines}
    same_pools = same_hits = measured = 0
    log = StageLog()
    with contextlib.ExitStack() as stack:
        stack.enter_context(timing.listening(log))
        clients = {e: GraphQLClient(urls[e], tokens[picks[0][0].key]) for e in engines}
        for client in clients.values():
            stack.callback(client.close)
        load_before = load_average()
        steal_before = cpu_steal_seconds()
        say(f"{warmup} warm-up and {len(picks) - warmup} measured queries per engine ...")
        for i, (p, text) in enumerate(picks):
            order = list(engines) if i % 2 == 0 else list(reversed(engines))
            pools: dict[str, Pool] = {}
            hits: dict[str, tuple[tuple[str, float], ...]] = {}
            for e in order:
                client = clients[e]
                client.headers["Authorization"] = f"Bearer {tokens[p.key]}"
                mark = len(log.samples)
                t0 = time.perf_counter()
                data = client.call(SEARCH_GQL, scope="USER", q=text, k=TOP_K)
                ms = (time.perf_counter() - t0) * 1000
                seen = log.since(mark)
                if not data["search"]["hits"]:
                    raise RuntimeError("a benchmark search returned nothing")
                hits[e] = hits_of(data)
                pools[e] = await text_pools(runtimes[e], p.ref, text)
                if i >= warmup:
                    tallies[e].total.append(ms)
                    tallies[e].fulltext.append(fulltext_ms(seen))
                    tallies[e].stages.append({**seen, "total": ms})
            if i >= warmup:
                measured += 1
                first = engines[0]
                same_pools += all(pools[e] == pools[first] for e in engines)
                same_hits += all(hits[e] == hits[first] for e in engines)
            if (i + 1) % 50 == 0:
                say(f"  {i + 1}/{len(picks)} queries")
        load_after = load_average()
        stolen = stolen_since(steal_before)
    by_engine = {e: tallies[e].figures() for e in engines}
    return {
        "engines": list(engines),
        "by_engine": by_engine,
        "ratios": ratios(by_engine),
        "identical_pools": round(same_pools / measured, 4) if measured else None,
        "identical_hits": round(same_hits / measured, 4) if measured else None,
        "measured_queries": measured,
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "cpu_steal_s": stolen,
    }
