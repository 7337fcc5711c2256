"""The measured tenant in a loaded and in an empty database, interleaved
(``bench recall-latency --tenants N``).

Per round, three operations on each database, the order of the databases alternating round
by round so neither always goes first: a ``search`` (the ``recall`` resolver with ``search``'s
default sources, topK 10), a note write (``set_value`` with ``embed: true``, a new key each
round) and a fact write (``assert_facts``, one new fact). They run through the resolvers, not
HTTP: what differs between the two runs is the database, and the API's own cost (the same in
both) would only dilute the ratio. The query and note vectors come from ``HashEmbedder``, as
the dataset's do, so the vector legs meet the data's clusters and no model shares the CPU.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.facts import ledger
from palimpsest.resolvers.notes import keyvalue
from palimpsest.resolvers.recall import timing
from palimpsest.resolvers.recall.planner import RecallRequest, recall
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import FactDraft
from palimpsest_bench.common import principal
from palimpsest_bench.recall_bench import POOL, TOP_K, latency_stats
from palimpsest_bench.recall_latency import StageLog, stage_summary
from palimpsest_bench.recall_load import AGENT, TextGen
from palimpsest_bench.tenant_plan import USER, TenantPlan
from palimpsest_bench.tenant_write import fact_draft

Progress = Callable[[str], None]
OPERATIONS = ("search", "note_write", "fact_write")
SIDES = ("loaded", "empty")
FIRST_WRITE_SERIAL = 100_000  # facts the measure writes: persons apart from the dataset's


def ratios(figures: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, float]:
    """``<operation>_p50_ratio`` and ``_p95_ratio``: loaded over empty."""
    out = {}
    for op in OPERATIONS:
        for stat in ("p50", "p95"):
            empty = figures["empty"][op][stat]
            out[f"{op}_{stat}_ratio"] = round(figures["loaded"][op][stat] / empty, 3)
    return out


def stage_ratios(stages: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, float]:
    """The p50 ratio of each search stage both sides observed."""
    loaded, empty = stages["loaded"], stages["empty"]
    return {
        name: round(loaded[name]["p50"] / empty[name]["p50"], 3)
        for name in sorted(set(loaded) & set(empty))
        if empty[name]["p50"] > 0
    }


def side_order(round_no: int) -> tuple[str, str]:
    """Which database goes first in a round: alternating."""
    return SIDES if round_no % 2 == 0 else (SIDES[1], SIDES[0])


@dataclass(frozen=True, slots=True)
class Round:
    """What one round asks of each database."""

    query: str
    note_key: str
    note: str
    fact: FactDraft


async def timed(op: Awaitable[Any]) -> float:
    started = time.perf_counter()  # a coroutine runs nothing until awaited
    await op
    return (time.perf_counter() - started) * 1000


async def one_side(
    svc: Services, who: Principal, r: Round, log: StageLog
) -> tuple[dict[str, float], dict[str, float]]:
    """The round's three operations on one database: their milliseconds, and the stages the
    search observed."""
    request = RecallRequest(
        query=r.query,
        top_k=TOP_K,
        sources=pure.SEARCH_DEFAULT,
        view=ledger.time_view(svc, None, None),
        pool=POOL,
        levers=pure.Levers.of(svc.settings),
    )
    mark = len(log.samples)
    took = {"search": await timed(recall(svc, who, [Scope.USER], request))}
    seen = log.since(mark)
    took["note_write"] = await timed(
        keyvalue.set_value(svc, who, Scope.USER, r.note_key, r.note, None, True, None)
    )
    took["fact_write"] = await timed(ledger.assert_facts(svc, who, Scope.USER, [r.fact]))
    return took, seen


async def measure(
    services: Mapping[str, Services],
    plan: TenantPlan,
    rounds: int,
    warmup: int,
    say: Progress,
    run_tag: str,
) -> dict[str, Any]:
    """``warmup`` + ``rounds`` rounds; per side and operation, latency figures (ms), and the
    search stages each side observed."""
    who = principal(plan.tenant, USER, AGENT)
    queries = TextGen(f"tenants-queries-{run_tag}")
    texts = TextGen(f"tenants-writes-{run_tag}")
    ms: dict[str, dict[str, list[float]]] = {s: {op: [] for op in OPERATIONS} for s in SIDES}
    stages: dict[str, list[dict[str, float]]] = {s: [] for s in SIDES}
    log = StageLog()
    with timing.listening(log):
        for n in range(warmup + rounds):
            note = texts.paragraph(texts.topic())
            fact = fact_draft(texts, FIRST_WRITE_SERIAL + n)
            r = Round(queries.query(), f"bench/{run_tag}/{n}", note, fact)
            for side in side_order(n):
                took, seen = await one_side(services[side], who, r, log)
                if n >= warmup:
                    for op, value in took.items():
                        ms[side][op].append(value)
                    stages[side].append(seen)
            if (n + 1) % 50 == 0:
                say(f"  {n + 1}/{warmup + rounds} rounds")
    figures = {side: {op: latency_stats(ms[side][op]) for op in OPERATIONS} for side in SIDES}
    stage_figures = {side: stage_summary(stages[side]) for side in SIDES}
    return {
        **ratios(figures),
        "figures": figures,
        "search_stages": stage_figures,
        "search_stage_p50_ratios": stage_ratios(stage_figures),
    }
