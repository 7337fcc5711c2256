"""``bench load --profile --engines procedure,cypher``: the mixed workload's CPU per request on
each full-text engine, interleaved on one database.

One API process per engine (``PALIMPSEST_SEARCH_ENGINE`` set to it; its ``/readyz`` must
name that engine), both on the same Neo4j and SQL store, the same principals seeded once.
After one uncounted warm-up round per engine (so the first measured round does not meet a
cold server), the open-loop mix (``load.drive``) runs in rounds of ``round_seconds``: each
round sends the mix to one engine's API, then the same requests (the same seed) to the
other's, the order alternating by round, so both meet the same machine load and the same
growing data; only one API is sent to at a time, so Neo4j's CPU in a round is that engine's.
A round's CPU is read from ``/proc``: that API's process tree, plus Neo4j's JVM net of its idle rate
(measured before and after the rounds, as ``load_profile`` does); an engine's
``cpu_ms_per_request`` is the sum over its rounds over its requests. Then each operation
alone (``load_profile.operation_slices``) on each engine in turn: ``search`` and ``recall``
are the ones the engine serves, the others are the control (the same on both).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import tempfile
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from palimpsest.config import Settings
from palimpsest.cypher.extension import Engine
from palimpsest.identity.tokens import load_keys, mint
from palimpsest_bench import load
from palimpsest_bench import load_profile as prof
from palimpsest_bench import load_readers as readers
from palimpsest_bench.load_figures import Results
from palimpsest_bench.recall_bench import percentile
from palimpsest_suites.served import ApiProcess

Say = Callable[[str], None]
K = TypeVar("K", bound=str)
ROUND_SECONDS = 20.0
START_SECONDS = 900.0


@dataclass(slots=True)
class Tally:
    """One engine's rounds: CPU seconds per group, requests, their latencies and errors."""

    cpu: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, before: Mapping[str, float], after: Mapping[str, float], r: Results) -> None:
        for group, used in prof.cpu_delta(before, after).items():
            self.cpu[group] = self.cpu.get(group, 0.0) + used
        self.latencies += [x for xs in r.latencies.values() for x in xs]
        self.errors += sum(r.errors.values())
        self.examples += r.examples[: max(0, 5 - len(self.examples))]

    def figures(self, idle: Mapping[str, float]) -> dict[str, Any]:
        n = len(self.latencies)
        net = prof.net_cpu(self.cpu, self.seconds, idle)
        return {
            "requests": n,
            "errors": self.errors,
            "error_examples": self.examples,
            "cpu_ms_per_request": round(net * 1000 / n, 2) if n else None,
            "cpu_ms_per_request_raw": round(prof.server_cpu(self.cpu) * 1000 / n, 2) if n else None,
            "cpu_ms_per_request_by_process": {
                g: round(v * 1000 / n, 2) if n else None for g, v in sorted(self.cpu.items())
            },
            "p50_ms": round(percentile(self.latencies, 50), 1) if n else None,
            "p95_ms": round(percentile(self.latencies, 95), 1) if n else None,
            "seconds": round(self.seconds, 1),
        }


def rounds_of(seconds: float, round_seconds: float) -> list[float]:
    """``seconds`` per engine cut into rounds of ``round_seconds`` (the last one shorter)."""
    out: list[float] = []
    left = seconds
    while left > 1e-9:
        out.append(min(round_seconds, left))
        left -= out[-1]
    return out


def order_of(engines: Sequence[Engine], index: int) -> list[Engine]:
    """Round ``index``'s order: as given in even rounds, reversed in odd ones."""
    return list(engines) if index % 2 == 0 else list(reversed(engines))


def ratio(by_engine: Mapping[K, Mapping[str, Any]], key: str) -> dict[str, float | None]:
    """Each engine's ``key`` over the last engine's."""
    *others, base = by_engine
    out: dict[str, float | None] = {}
    for name in others:
        mine, theirs = by_engine[name].get(key), by_engine[base].get(key)
        out[f"{name}/{base}"] = round(mine / theirs, 3) if mine and theirs else None
    return out


def answering_engine(url: str) -> str | None:
    with urllib.request.urlopen(f"{url}/readyz", timeout=30) as reply:  # noqa: S310
        body = json.loads(reply.read())
    engine = body.get("searchEngine", {}).get("engine")
    return str(engine) if engine is not None else None


def run(
    settings: Settings,
    engines: Sequence[Engine],
    rate: float,
    seconds: float,
    principals: int,
    seed_value: int,
    say: Say,
    profile: prof.Profile,
    env: dict[str, str] | None = None,
    drop: tuple[str, ...] = (),
    round_seconds: float = ROUND_SECONDS,
) -> dict[str, Any]:
    """``seconds`` of the mix per engine at ``rate``, in alternating rounds; then each
    operation alone on each engine. ``env``/``drop`` as in ``load.run``."""
    keys = load_keys(settings)
    tenants = [f"load-{secrets.token_hex(4)}" for _ in range(2)]
    tokens = [
        mint(keys, tenant=tenants[i % 2], user=f"user{i}", agent="loader", ttl_seconds=7200)
        for i in range(principals)
    ]
    log = Path(tempfile.gettempdir()) / f"palimpsest-load-engines-{os.getpid()}.log"
    apis = {
        e: ApiProcess(
            {"PALIMPSEST_LOG_LEVEL": "WARNING"} | (env or {}) | {"PALIMPSEST_SEARCH_ENGINE": e},
            log,
            drop=drop,
        )
        for e in engines
    }
    tallies = {e: Tally() for e in engines}
    try:
        ports = [a.port for a in apis.values()]
        say(f"starting one API per engine on ports {ports} (log {log}) ...")
        # Side by side: each warms up first (``PALIMPSEST_WARMUP_SECONDS``), minutes on a
        # loaded machine.
        with ThreadPoolExecutor(len(apis)) as starting:
            for started in [starting.submit(api.start, START_SECONDS) for api in apis.values()]:
                started.result()
        for e, api in apis.items():
            if (found := answering_engine(api.url)) != e:
                raise RuntimeError(f"the API started for {e} answers on {found}")
        pids = {e: api.process.pid for e, api in apis.items() if api.process is not None}
        cpu = {e: readers.CpuReader(prof.process_groups(settings, [pids[e]])) for e in engines}
        every = readers.CpuReader(prof.process_groups(settings, list(pids.values())))
        say(f"seeding {principals} principals ...")
        asyncio.run(load._seed_all(apis[engines[0]].url, tokens, random.Random(seed_value)))
        say(f"a warm-up round of {round_seconds:g}s per engine (not counted) ...")
        for e in engines:
            # Neither engine meets a cold Neo4j or API in the first measured round.
            asyncio.run(load.drive([apis[e].url], tokens, rate, round_seconds, random.Random(0)))
        say(f"profile: idle CPU for {profile.idle_seconds:g}s ...")
        idle_before = asyncio.run(prof.idle_rate(every, profile.idle_seconds))
        load_before = os.getloadavg()
        plan = rounds_of(seconds, round_seconds)
        say(f"{len(plan)} rounds of {round_seconds:g}s per engine at {rate:g}/s ...")
        for index, span in enumerate(plan):
            for e in order_of(engines, index):
                # The same requests on each engine in a round: the same seed.
                rng = random.Random(seed_value * 100_003 + index)
                before = cpu[e].read()
                results, elapsed = asyncio.run(load.drive([apis[e].url], tokens, rate, span, rng))
                tallies[e].add(before, cpu[e].read(), results)
                tallies[e].seconds += elapsed
        load_after = os.getloadavg()
        idle_after = asyncio.run(prof.idle_rate(every, profile.idle_seconds))
        idle = prof.mean_rates(idle_before, idle_after)
        say(f"each operation alone on each engine, {profile.slice_rate:g}/s ...")
        slices = asyncio.run(
            _slices(apis, engines, cpu, tokens, profile, idle_after, random.Random(seed_value))
        )
    finally:
        for api in apis.values():
            api.stop()
    by_engine = {e: tallies[e].figures(idle) for e in engines}
    weights = {op: w for op, (w, _) in load.OPS.items()}
    for e in engines:
        by_engine[e]["by_operation"] = slices[e]
        by_engine[e]["cpu_ms_per_request_from_slices"] = prof.weighted(
            {op: f["cpu_ms"] for op, f in slices[e].items()}, weights
        )
    return {
        "benchmark": "load-engines",
        "engines": list(engines),
        "rate": rate,
        "seconds_per_engine": seconds,
        "round_seconds": round_seconds,
        "principals": principals,
        "by_engine": by_engine,
        "cpu_ms_per_request_ratio": ratio(by_engine, "cpu_ms_per_request"),
        "cpu_ms_per_request_from_slices_ratio": ratio(by_engine, "cpu_ms_per_request_from_slices"),
        "search_cpu_ms_ratio": ratio({e: slices[e]["search"] for e in engines}, "cpu_ms"),
        "recall_cpu_ms_ratio": ratio({e: slices[e]["recall"] for e in engines}, "cpu_ms"),
        "idle_cpu_ms_per_s": {"before": idle_before, "after": idle_after, "mean": idle},
        "sql_backend": settings.sql.backend,
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
    }


async def _slices(
    apis: Mapping[Engine, ApiProcess],
    engines: Sequence[Engine],
    cpu: Mapping[Engine, readers.CpuReader],
    tokens: Sequence[str],
    profile: prof.Profile,
    idle: dict[str, float],
    rng: random.Random,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Each operation alone on each engine, the engines' order alternating by operation."""
    out: dict[str, dict[str, dict[str, Any]]] = {e: {} for e in engines}
    pools = {e: load.Pool(apis[e].url) for e in engines}
    try:
        for index, op in enumerate(sorted(load.OPS)):
            for e in order_of(engines, index):
                pool = pools[e]

                async def send(name: str, pool: load.Pool = pool) -> bool:
                    ok, _ = await pool.call(
                        load.OPS[name][1], load.variables(name, rng), rng.choice(tokens)
                    )
                    return ok

                got = await prof.operation_slices(
                    cpu[e], [op], send, profile.slice_rate, profile.slice_seconds,
                    profile.idle_seconds, idle,
                )  # fmt: skip
                out[e][op] = got[op]
                idle = got[op]["idle"]
    finally:
        for pool in pools.values():
            await pool.close()
    return out
