"""``bench load --profile``: where the CPU of a load run goes, minute by minute.

CPU: the user plus system time of each process group (the API process with any uvicorn
workers it forked, Neo4j's JVM, PostgreSQL when it is the SQL backend, and this load
generator), read from ``/proc/<pid>/stat`` at the start, at each minute boundary and at the
end. ``cpu_ms_per_request`` is the API's plus Neo4j's CPU over the requests served.

Per operation: a server's CPU cannot be split honestly between concurrent requests (an
event loop interleaves them, and Neo4j's threads serve them all), so after the mixed run
each operation runs alone for a short slice at a low fixed rate, and its CPU is that slice's
CPU over its requests. Neo4j here is shared with other work, so the Neo4j JVM's idle CPU is
measured before the run (``idle_cpu_ms_per_s``) and each figure also comes net of it.

Statements: the per-statement histograms the API exports (``palimpsest_cypher_seconds``) are
scraped at the same moments; each minute then says how many of each statement ran and
their mean time, and how many statements a request ran.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from palimpsest.config import Settings
from palimpsest_bench.load_readers import (
    OPERATION_METRIC,
    STATEMENT_METRIC,
    CpuReader,
    Series,
    histogram_window,
    parse_histograms,
    scrape,
)

# Groups whose CPU is the server's (what a request costs); the generator's is reported apart.
SERVER_GROUPS = ("api", "neo4j")


# -- marks: the samples taken at each minute boundary ---------------------------------------


@dataclass(frozen=True, slots=True)
class Mark:
    at_s: float  # seconds since the start of the run
    cpu: dict[str, float]
    statements: dict[str, Series] | None
    operations: dict[str, Series] | None


@dataclass
class Profiler:
    cpu: CpuReader
    metrics_url: str | None
    fetch: Callable[[str], str | None] = scrape
    marks: list[Mark] = field(default_factory=list)

    async def mark(self, at_s: float) -> None:
        cpu = self.cpu.read()
        statements = operations = None
        if self.metrics_url is not None:
            text = await asyncio.to_thread(self.fetch, self.metrics_url)
            if text is not None:
                statements = parse_histograms(text, STATEMENT_METRIC, "statement")
                operations = parse_histograms(text, OPERATION_METRIC, "field")
        self.marks.append(Mark(at_s, cpu, statements, operations))

    async def every(self, width: float, until: float, clock: Callable[[], float]) -> None:
        """Mark at each ``width`` boundary before ``until`` (``clock``: seconds since the
        start); the caller marks the end."""
        k = 1
        while k * width < until:
            await asyncio.sleep(max(0.0, k * width - clock()))
            await self.mark(clock())
            k += 1


def _ms_per_request(cpu_s: float, requests: int) -> float | None:
    return round(cpu_s * 1000 / requests, 2) if requests else None


def server_cpu(cpu: Mapping[str, float]) -> float:
    return sum(cpu.get(g, 0.0) for g in SERVER_GROUPS)


def cpu_delta(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    return {g: after[g] - before.get(g, 0.0) for g in after}


def mark_windows(
    marks: list[Mark],
    requests: list[int],
    idle: Mapping[str, float],
    served: list[int] | None = None,
) -> list[dict[str, Any]]:
    """Each window between consecutive marks: CPU seconds per group, API plus Neo4j CPU per
    request (``requests[i]``: the requests due in window i; Neo4j's net of its ``idle``
    rate, and raw), and the statements that ran.
    A request due near a boundary may finish in the next window; over a minute that is noise."""
    out = []
    for i, (a, b) in enumerate(itertools.pairwise(marks)):
        n = requests[i] if i < len(requests) else 0
        delta = cpu_delta(a.cpu, b.cpu)
        window: dict[str, Any] = {
            "cpu_s": {g: round(v, 2) for g, v in sorted(delta.items())},
            "cpu_ms_per_request": _ms_per_request(net_cpu(delta, b.at_s - a.at_s, idle), n),
            "cpu_ms_per_request_raw": _ms_per_request(server_cpu(delta), n),
        }
        if served is not None and i < len(served):
            net = net_cpu(delta, b.at_s - a.at_s, idle)
            window["cpu_ms_per_served_request"] = _ms_per_request(net, served[i])
        if a.statements is not None and b.statements is not None:
            statements = histogram_window(a.statements, b.statements)
            ran = sum(s["n"] for s in statements.values())
            window["statements_per_request"] = round(ran / n, 2) if n else None
            window["statements"] = statements
        if a.operations is not None and b.operations is not None:
            window["server_ms_by_field"] = {
                k: v["mean_ms"] for k, v in histogram_window(a.operations, b.operations).items()
            }
        out.append(window)
    return out


def run_figures(marks: list[Mark], requests: int, idle: Mapping[str, float]) -> dict[str, Any]:
    """The whole run: API plus Neo4j CPU per request (Neo4j's net of its ``idle`` rate, and
    raw), and CPU seconds per group, per request and as cores busy."""
    if len(marks) < 2:
        return {"cpu_ms_per_request": None}
    delta = cpu_delta(marks[0].cpu, marks[-1].cpu)
    span = marks[-1].at_s - marks[0].at_s
    return {
        "cpu_ms_per_request": _ms_per_request(net_cpu(delta, span, idle), requests),
        "cpu_ms_per_request_raw": _ms_per_request(server_cpu(delta), requests),
        "cpu_s": {g: round(v, 2) for g, v in sorted(delta.items())},
        "cpu_ms_per_request_by_process": {
            g: _ms_per_request(v, requests) for g, v in sorted(delta.items())
        },
        "cores_busy": {g: round(v / span, 2) for g, v in sorted(delta.items())},
    }


def net_cpu(delta: Mapping[str, float], seconds: float, idle: Mapping[str, float]) -> float:
    """API plus Neo4j CPU seconds, Neo4j's net of its idle rate (``idle``: ms per second per
    group) over ``seconds``: Neo4j is shared with other work on this machine, the API is
    ours alone (its background work is part of what a deployment pays)."""
    neo4j = max(0.0, delta.get("neo4j", 0.0) - idle.get("neo4j", 0.0) * seconds / 1000)
    return delta.get("api", 0.0) + neo4j


def slice_figures(
    before: Mapping[str, float],
    after: Mapping[str, float],
    requests: int,
    seconds: float,
    idle_ms_per_s: Mapping[str, float],
) -> dict[str, Any]:
    """One operation run alone: CPU ms per request per group; ``cpu_ms`` is API plus Neo4j,
    Neo4j's net of its idle rate over the slice's ``seconds``; ``cpu_ms_raw`` without that."""
    delta = cpu_delta(before, after)
    net = net_cpu(delta, seconds, idle_ms_per_s)
    return {
        "cpu_ms": _ms_per_request(net, requests),
        "cpu_ms_raw": _ms_per_request(server_cpu(delta), requests),
        **{f"{g}_cpu_ms": _ms_per_request(v, requests) for g, v in sorted(delta.items())},
        "neo4j_cpu_ms_net_of_idle": _ms_per_request(net - delta.get("api", 0.0), requests),
        "slice_requests": requests,
        "slice_seconds": round(seconds, 2),
    }


def mean_rates(*rates: Mapping[str, float]) -> dict[str, float]:
    """Each group's mean of several idle rates (the windows either side of a measurement)."""
    groups = {g for r in rates for g in r}
    return {g: round(sum(r.get(g, 0.0) for r in rates) / len(rates), 2) for g in sorted(groups)}


def weighted(per_op: Mapping[str, float | None], weights: Mapping[str, int]) -> float | None:
    """The mix's average from each operation's figure, weighted as the mix draws them."""
    got = {op: v for op, v in per_op.items() if v is not None and op in weights}
    total = sum(weights[op] for op in got)
    return round(sum(weights[op] * v for op, v in got.items()) / total, 2) if total else None


# -- the measurements around the run -------------------------------------------------------


async def idle_rate(cpu: CpuReader, seconds: float) -> dict[str, float]:
    """Each group's CPU ms per second while the bench sends nothing."""
    before = cpu.read()
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.sleep(seconds)
    delta = cpu_delta(before, cpu.read())
    elapsed = loop.time() - started
    return {g: round(v * 1000 / elapsed, 2) for g, v in sorted(delta.items())}


async def operation_slices(
    cpu: CpuReader,
    ops: Iterable[str],
    send: Callable[[str], Coroutine[Any, Any, bool]],
    rate: float,
    seconds: float,
    idle_seconds: float,
    idle: Mapping[str, float],
) -> dict[str, dict[str, Any]]:
    """Each operation alone, ``rate`` requests/s (open loop) for ``seconds``; its CPU is what
    the processes spent from the first send until the last reply, over its requests. An idle
    window of ``idle_seconds`` precedes each slice and follows the last: a slice's idle rate
    is the mean of the two windows around it (other work on a shared Neo4j comes and goes);
    ``idle``: the window before the first, measured by the caller."""
    loop = asyncio.get_running_loop()
    out: dict[str, dict[str, Any]] = {}
    for op in ops:
        before = cpu.read()
        started = loop.time()
        tasks: list[asyncio.Task[bool]] = []
        for i in range(max(1, int(rate * seconds))):
            delay = started + i / rate - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(send(op)))
        oks = await asyncio.gather(*tasks)
        elapsed = loop.time() - started
        after = cpu.read()
        idle_after = await idle_rate(cpu, idle_seconds)
        around = mean_rates(idle, idle_after)
        figures = slice_figures(before, after, len(oks), elapsed, around)
        out[op] = {**figures, "slice_errors": sum(1 for ok in oks if not ok), "idle": around}
        idle = idle_after
    return out


@dataclass(frozen=True)
class Profile:
    """``--profile``: the idle windows (before and after the run, around each slice) and the
    per-operation slices."""

    idle_seconds: float = 5.0
    slice_rate: float = 20.0
    slice_seconds: float = 5.0


def process_groups(settings: Settings, api_pids: list[int]) -> dict[str, list[int]]:
    """The processes whose CPU the profile reads: the API processes' trees, the managed
    Neo4j's JVM (none when Neo4j is not the managed one), PostgreSQL's when it is the SQL
    backend, and this generator."""
    from palimpsest.local.neo4j import manager

    groups = {
        "api": api_pids,
        "neo4j": [pid] if (pid := manager.status(settings).pid) is not None else [],
        "generator": [os.getpid()],
    }
    if settings.sql.backend == "postgres":
        from palimpsest.local.postgres import manager as pg

        groups["postgres"] = [pid] if (pid := pg.status(settings).pid) is not None else []
    return groups


def add_profile(
    out: dict[str, Any],
    profiled: dict[str, Any],
    weights: Mapping[str, int],
    seconds: float,
) -> None:
    """The profile's figures, beside the run's: the whole run, each minute, each operation."""
    profiler: Profiler = profiled["profiler"]
    idle = mean_rates(profiled["idle_before"], profiled["idle_after"])
    out.update(run_figures(profiler.marks, out["requests"], idle))
    # Shed requests (503) cost little: on an overloaded machine this one is the fairer figure.
    whole = run_figures(profiler.marks, out["requests"] - out["errors"], idle)
    out["cpu_ms_per_served_request"] = whole["cpu_ms_per_request"]
    out["idle_cpu_ms_per_s"] = {
        "before": profiled["idle_before"],
        "after": profiled["idle_after"],
        "mean": idle,
    }
    requests = {w["from_s"]: w["requests"] for w in out["by_minute"]}
    ok = {w["from_s"]: w["requests"] - w["errors"] for w in out["by_minute"]}
    counts = [requests.get(int(60 * i), 0) for i in range(len(profiler.marks) - 1)]
    served = [ok.get(int(60 * i), 0) for i in range(len(profiler.marks) - 1)]
    for i, window in enumerate(mark_windows(profiler.marks, counts, idle, served)):
        for minute in out["by_minute"]:
            if minute["from_s"] == int(60 * i):
                minute.update(window)
    slices: dict[str, dict[str, Any]] = profiled["slices"]
    for op, figures in slices.items():
        out["by_operation"].setdefault(op, {}).update(figures)
    out["cpu_ms_per_request_from_slices"] = weighted(
        {op: f["cpu_ms"] for op, f in slices.items()}, weights
    )
    out["cpu_ms_per_request_from_slices_raw"] = weighted(
        {op: f["cpu_ms_raw"] for op, f in slices.items()}, weights
    )
