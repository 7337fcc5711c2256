"""``bench load --profile``'s arithmetic: CPU per process tree from /proc, per request by
minute and per operation (Neo4j's net of its idle rate), and the statement histograms."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from typing import Any

import pytest

from palimpsest_bench import load_profile as prof
from palimpsest_bench.load_figures import Results, summary

TICKS = 100.0


def stat_line(pid: int, name: str, ppid: int, utime: int, stime: int) -> str:
    # The real layout: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
    # majflt cmajflt utime stime cutime cstime ...
    return f"{pid} ({name}) S {ppid} 1 1 0 -1 0 0 0 0 0 {utime} {stime} 7 7 20 0 1 0\n"


class FakeProc:
    """A process table: pid -> (name, parent, utime ticks, stime ticks)."""

    def __init__(self, table: dict[int, tuple[str, int, int, int]]) -> None:
        self.table = table

    def stat(self, pid: int) -> str | None:
        if pid not in self.table:
            return None
        name, ppid, u, s = self.table[pid]
        return stat_line(pid, name, ppid, u, s)

    def pids(self) -> Iterable[int]:
        return [*self.table, 99999]  # one that vanished between listing and reading

    def add(self, pid: int, ticks: int) -> None:
        name, ppid, u, s = self.table[pid]
        self.table[pid] = (name, ppid, u + ticks, s)


def test_a_stat_line_is_read_after_the_last_parenthesis_of_the_name() -> None:
    line = stat_line(7, "uvicorn (worker) x", 3, utime=250, stime=50)
    assert prof.parse_stat(line, TICKS) == (3, 3.0)


def test_each_group_sums_its_trees_but_not_another_groups_root() -> None:
    proc = FakeProc(
        {
            10: ("python", 1, 100, 0),  # the generator
            20: ("uvicorn", 10, 300, 100),  # the API, started by the generator
            21: ("uvicorn", 20, 50, 50),  # its worker
            22: ("python", 21, 10, 0),  # the worker's child
            30: ("java", 1, 1000, 500),  # Neo4j
            40: ("other", 1, 9999, 0),  # not ours
        }
    )
    reader = prof.CpuReader({"generator": [10], "api": [20], "neo4j": [30]}, proc, TICKS)
    assert reader.read() == {"generator": 1.0, "api": 5.1, "neo4j": 15.0}


def test_a_group_whose_process_is_gone_reads_zero() -> None:
    reader = prof.CpuReader({"neo4j": [], "api": [5]}, FakeProc({}), TICKS)
    assert reader.read() == {"neo4j": 0.0, "api": 0.0}


def test_the_kernels_own_table_is_read_for_this_process() -> None:
    if not os.path.exists("/proc/self/stat"):
        pytest.skip("no /proc here")
    reader = prof.CpuReader({"generator": [os.getpid()]})
    first = reader.read()["generator"]
    sum(i * i for i in range(300_000))  # spend some CPU
    assert reader.read()["generator"] >= first > 0


METRICS = """\
# HELP palimpsest_cypher_seconds Time spent in one Cypher statement
# TYPE palimpsest_cypher_seconds histogram
palimpsest_cypher_seconds_bucket{{le="0.005",statement="GET_MEMORY"}} {g5}
palimpsest_cypher_seconds_bucket{{le="0.01",statement="GET_MEMORY"}} {g10}
palimpsest_cypher_seconds_bucket{{le="+Inf",statement="GET_MEMORY"}} {gn}
palimpsest_cypher_seconds_count{{statement="GET_MEMORY"}} {gn}
palimpsest_cypher_seconds_sum{{statement="GET_MEMORY"}} {gsum}
palimpsest_cypher_seconds_bucket{{le="0.005",statement="UPSERT_MEMORY"}} 0.0
palimpsest_cypher_seconds_bucket{{le="0.01",statement="UPSERT_MEMORY"}} 0.0
palimpsest_cypher_seconds_bucket{{le="+Inf",statement="UPSERT_MEMORY"}} 4.0
palimpsest_cypher_seconds_count{{statement="UPSERT_MEMORY"}} 4.0
palimpsest_cypher_seconds_sum{{statement="UPSERT_MEMORY"}} 0.2
# HELP palimpsest_graphql_operation_seconds GraphQL operation time
# TYPE palimpsest_graphql_operation_seconds histogram
palimpsest_graphql_operation_seconds_bucket{{field="memory",le="+Inf"}} {gn}
palimpsest_graphql_operation_seconds_count{{field="memory"}} {gn}
palimpsest_graphql_operation_seconds_sum{{field="memory"}} {osum}
"""


def metrics(g5: int, g10: int, gn: int, gsum: float, osum: float) -> str:
    return METRICS.format(g5=g5, g10=g10, gn=gn, gsum=gsum, osum=osum)


def histograms(text: str) -> dict[str, prof.Series]:
    return prof.parse_histograms(text, prof.STATEMENT_METRIC, "statement")


def test_a_window_of_the_histograms_counts_what_ran_between_two_scrapes() -> None:
    before = histograms(metrics(g5=10, g10=10, gn=10, gsum=0.02, osum=0.05))
    # 100 more reads: 90 under 5 ms, 6 more under 10 ms, 4 slower; 0.5 s in all. No upserts.
    after = histograms(metrics(g5=100, g10=106, gn=110, gsum=0.52, osum=1.0))
    assert prof.histogram_window(before, after) == {
        "GET_MEMORY": {"n": 100, "mean_ms": 5.0, "p95_le_ms": 10.0},
    }
    # From nothing (the first scrape of a fresh server) every series counts whole; a 95th
    # percentile past the last finite bound has none.
    assert prof.histogram_window({}, before)["UPSERT_MEMORY"] == {
        "n": 4,
        "mean_ms": 50.0,
        "p95_le_ms": None,
    }


def mark(at: float, api: float, neo4j: float, text: str | None = None) -> prof.Mark:
    statements = histograms(text) if text else None
    operations = prof.parse_histograms(text, prof.OPERATION_METRIC, "field") if text else None
    return prof.Mark(
        at, {"api": api, "neo4j": neo4j, "generator": at / 100}, statements, operations
    )


def test_each_minute_gets_its_cpu_per_request_with_neo4j_net_of_its_idle_rate() -> None:
    marks = [
        mark(0.0, api=10.0, neo4j=100.0, text=metrics(0, 0, 0, 0.0, 0.0)),
        mark(60.0, api=13.0, neo4j=106.0, text=metrics(100, 120, 120, 0.6, 1.2)),
        mark(121.0, api=16.0, neo4j=115.0, text=metrics(200, 240, 240, 1.2, 2.4)),
    ]
    idle = {"api": 5.0, "neo4j": 50.0}  # ms per second: Neo4j serves others as well
    windows = prof.mark_windows(marks, [600, 600], idle, served=[300, 600])
    # Minute 1: API 3 s, Neo4j 6 s less 60 s x 50 ms = 3 s: 6 s over 600 requests.
    assert windows[0]["cpu_ms_per_request"] == 10.0
    assert windows[0]["cpu_ms_per_request_raw"] == 15.0
    assert windows[0]["cpu_ms_per_served_request"] == 20.0  # half of them were refused
    assert windows[0]["cpu_s"] == {"api": 3.0, "generator": 0.6, "neo4j": 6.0}
    # Minute 2 lasted 61 s: 3 + (9 - 3.05) = 8.95 s over 600.
    assert windows[1]["cpu_ms_per_request"] == pytest.approx(14.92)
    # 120 reads a minute; the 4 upserts ran before the first scrape, so in no window.
    assert windows[0]["statements_per_request"] == 0.2
    assert windows[0]["statements"]["GET_MEMORY"]["n"] == 120
    assert "UPSERT_MEMORY" not in windows[0]["statements"]
    assert windows[1]["server_ms_by_field"] == {"memory": 10.0}


def test_a_window_without_requests_has_no_per_request_figure() -> None:
    marks = [mark(0.0, 1.0, 1.0), mark(60.0, 2.0, 2.0)]
    (window,) = prof.mark_windows(marks, [0], {})
    assert window["cpu_ms_per_request"] is None
    assert "statements" not in window  # no metrics listener: no histograms


def test_the_whole_run_divides_api_plus_neo4j_by_every_request() -> None:
    marks = [mark(0.0, 10.0, 100.0), mark(60.0, 12.0, 104.0), mark(100.0, 14.0, 108.0)]
    figures = prof.run_figures(marks, 1000, {"neo4j": 20.0})
    # API 4 s + Neo4j (8 s - 100 s x 20 ms) = 10 s over 1000 requests.
    assert figures["cpu_ms_per_request"] == 10.0
    assert figures["cpu_ms_per_request_raw"] == 12.0
    assert figures["cpu_ms_per_request_by_process"]["api"] == 4.0
    assert figures["cores_busy"] == {"api": 0.04, "generator": 0.01, "neo4j": 0.08}
    assert prof.run_figures(marks[:1], 1000, {}) == {"cpu_ms_per_request": None}


def test_idle_cpu_never_makes_neo4j_negative() -> None:
    delta = {"api": 1.0, "neo4j": 0.5}
    assert prof.net_cpu(delta, 10.0, {"neo4j": 100.0, "api": 100.0}) == 1.0


def test_an_operation_alone_costs_its_slices_cpu_over_its_requests() -> None:
    proc = FakeProc({20: ("uvicorn", 1, 0, 0), 30: ("java", 1, 0, 0), 10: ("py", 1, 0, 0)})
    reader = prof.CpuReader({"api": [20], "neo4j": [30], "generator": [10]}, proc, TICKS)
    cost = {"kv_read": (1, 2), "recall": (5, 3)}  # ticks (10 ms) of API and Neo4j a request

    async def send(op: str) -> bool:
        api, neo4j = cost[op]
        proc.add(20, api)
        proc.add(30, neo4j)
        return op != "recall"

    async def go() -> dict[str, dict[str, Any]]:
        return await prof.operation_slices(
            reader, ["kv_read", "recall"], send, 200.0, 0.05, 0.01, {}
        )

    slices = asyncio.run(go())
    assert slices["kv_read"]["slice_requests"] == 10
    assert slices["kv_read"]["api_cpu_ms"] == 10.0
    assert slices["kv_read"]["neo4j_cpu_ms"] == 20.0
    assert slices["kv_read"]["cpu_ms"] == slices["kv_read"]["cpu_ms_raw"] == 30.0
    assert slices["recall"]["cpu_ms"] == 80.0
    assert slices["recall"]["slice_errors"] == 10
    assert prof.weighted({"kv_read": 30.0, "recall": 80.0}, {"kv_read": 3, "recall": 1}) == 42.5


def test_an_idle_neo4j_is_subtracted_from_a_slice() -> None:
    before = {"api": 0.0, "neo4j": 0.0}
    after = {"api": 1.0, "neo4j": 3.0}
    figures = prof.slice_figures(before, after, 100, 10.0, {"neo4j": 100.0})
    assert figures["cpu_ms_raw"] == 40.0
    assert figures["cpu_ms"] == 30.0  # 1 s of Neo4j's 3 was its idle rate over 10 s
    assert figures["neo4j_cpu_ms_net_of_idle"] == 20.0
    assert prof.mean_rates({"neo4j": 10.0}, {"neo4j": 30.0, "api": 2.0}) == {
        "api": 1.0,
        "neo4j": 20.0,
    }


def test_the_profile_lands_under_the_keys_the_acceptance_check_reads() -> None:
    results = Results()
    for i in range(120):
        due = i * 1.0
        op = "kv_read" if i % 2 else "recall"
        results.latencies.setdefault(op, []).append(5.0)
        results.timeline.append((due, 5.0, True, op))
    out = summary(results, 120.0, 1.0, 120.0)
    profiler = prof.Profiler(prof.CpuReader({}, FakeProc({}), TICKS), None)
    profiler.marks = [mark(0.0, 0.0, 0.0), mark(60.0, 0.6, 0.6), mark(120.0, 1.8, 1.8)]
    slices = {
        "kv_read": prof.slice_figures({}, {"api": 0.1, "neo4j": 0.1}, 100, 5.0, {}),
        "recall": prof.slice_figures({}, {"api": 0.5, "neo4j": 0.5}, 100, 5.0, {}),
    }
    idle = {"neo4j": 0.0}
    profiled = {"profiler": profiler, "slices": slices, "idle_before": idle, "idle_after": idle}
    prof.add_profile(out, profiled, {"kv_read": 3, "recall": 1}, 120.0)
    assert out["cpu_ms_per_request"] == 30.0  # 3.6 s over 120 requests
    assert out["cpu_ms_per_served_request"] == 30.0  # none was refused
    assert [m["cpu_ms_per_request"] for m in out["by_minute"]] == [20.0, 40.0]
    assert all("p50_ms" in m for m in out["by_minute"])
    assert out["by_operation"]["kv_read"]["cpu_ms"] == 2.0
    assert out["by_operation"]["recall"]["cpu_ms"] == 10.0
    assert out["by_operation"]["recall"]["p50"] == 5.0  # beside the latency figures
    assert out["cpu_ms_per_request_from_slices"] == 4.0
