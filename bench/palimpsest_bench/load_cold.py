"""``bench load --cold``: the first minutes of a freshly started server, beside the same server
warm, in one invocation (issue 48).

A first API process seeds the principals (as ``bench load`` does) and stops. Then, with a
Neo4j of the bench's own (``--neo4j-home``), that Neo4j is restarted too (its page cache and
compiled code gone); on the shared server only the API starts afresh. A new API process starts,
and from the moment ``/readyz`` answers 200 (its warm-up done, unless
``PALIMPSEST_WARMUP_SECONDS=0`` is in the bench's environment) the open-loop mix arrives at
``rate`` for ``seconds``: the cold run. The same mix runs again on the same, now warm, process:
the warm run. Each prints its figures by minute (p50, p95, refusals, API plus Neo4j CPU per
request), and ``targets`` compares the two: no refusal in the cold run, and its first
minute's p95 at most twice the warm run's p95.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, mint
from palimpsest_bench import load
from palimpsest_bench import load_profile as prof
from palimpsest_bench import load_readers as readers
from palimpsest_bench.load_figures import summary
from palimpsest_suites.served import ApiProcess

Say = Callable[[str], None]
IDLE_SECONDS = 5.0
READY_TIMEOUT_S = 900.0
P95_FACTOR = 2.0  # the target: the cold first minute's p95 at most this times the warm p95


def run(
    settings: Settings,
    rate: float,
    seconds: float,
    principals: int,
    seed_value: int,
    say: Say,
    env: dict[str, str] | None = None,
    drop: tuple[str, ...] = (),
    restart_neo4j: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """``restart_neo4j``: stop and start the bench's own Neo4j (None: the shared one stays)."""
    rng = random.Random(seed_value)
    keys = load_keys(settings)
    tenants = [f"load-{secrets.token_hex(4)}" for _ in range(2)]
    tokens = [
        mint(keys, tenant=tenants[i % 2], user=f"user{i}", agent="loader", ttl_seconds=7200)
        for i in range(principals)
    ]
    log = Path(tempfile.gettempdir()) / f"palimpsest-load-cold-{os.getpid()}.log"
    base = {"PALIMPSEST_LOG_LEVEL": "WARNING"} | (env or {})

    seeder = ApiProcess(base, log, drop=drop)
    say(f"seeding {principals} principals through a first API process (log {log}) ...")
    seeder.start(READY_TIMEOUT_S)
    try:
        asyncio.run(load._seed_all(seeder.url, tokens, rng))
    finally:
        seeder.stop()
    if restart_neo4j is not None:
        say("restarting the bench's Neo4j ...")
        restart_neo4j()
    cpu = readers.CpuReader(prof.process_groups(settings, []))
    say(f"idle CPU for {IDLE_SECONDS:g}s ...")
    idle = asyncio.run(prof.idle_rate(cpu, IDLE_SECONDS))

    api = ApiProcess(base, log, drop=drop)
    say("starting the API afresh and waiting for /readyz ...")
    started = time.monotonic()
    api.start(READY_TIMEOUT_S)
    ready_s = round(time.monotonic() - started, 1)
    try:
        assert api.process is not None
        cpu = readers.CpuReader(prof.process_groups(settings, [api.process.pid]))
        load_before = os.getloadavg()
        say(f"ready after {ready_s}s; cold: {rate:g} requests/s for {seconds:g}s ...")
        cold = _leg(api.url, tokens, rate, seconds, rng, cpu, idle)
        say(f"warm: the same for {seconds:g}s ...")
        warm = _leg(api.url, tokens, rate, seconds, rng, cpu, idle)
        load_after = os.getloadavg()
    finally:
        api.stop()
    first_p95 = cold["by_minute"][0]["p95_ms"] if cold["by_minute"] else None
    ratio = round(first_p95 / warm["p95_ms"], 2) if first_p95 and warm["p95_ms"] else None
    return {
        "ready_seconds": ready_s,
        "neo4j_restarted": restart_neo4j is not None,
        "warmup_seconds_setting": os.environ.get("PALIMPSEST_WARMUP_SECONDS", "default"),
        "targets": {
            "cold_refusals": cold["errors"],
            "first_minute_p95_ms": first_p95,
            "warm_p95_ms": warm["p95_ms"],
            "first_minute_p95_over_warm_p95": ratio,
            "met": cold["errors"] == 0 and ratio is not None and ratio <= P95_FACTOR,
        },
        "cold": cold,
        "warm": warm,
        "idle_cpu_ms_per_s": idle,
        "principals": principals,
        "sql_backend": settings.sql.backend,
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
    }


def _leg(
    url: str,
    tokens: list[str],
    rate: float,
    seconds: float,
    rng: random.Random,
    cpu: readers.CpuReader,
    idle: dict[str, float],
) -> dict[str, Any]:
    """One open-loop run and its figures, each minute with its CPU per request."""
    profiler = prof.Profiler(cpu, None)
    results, elapsed = asyncio.run(load.drive([url], tokens, rate, seconds, rng, profiler))
    out = summary(results, elapsed, rate, seconds)
    out.update(prof.run_figures(profiler.marks, out["requests"], idle))
    counts = [w["requests"] for w in out["by_minute"]]
    for minute, window in zip(
        out["by_minute"], prof.mark_windows(profiler.marks, counts, idle), strict=False
    ):
        minute["refusals"] = minute["errors"]
        minute["cpu_ms_per_request"] = window["cpu_ms_per_request"]
        minute["cpu_ms_per_request_raw"] = window["cpu_ms_per_request_raw"]
    return out
