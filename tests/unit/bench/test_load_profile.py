"""``bench load --profile``'s arithmetic: CPU per process tree from /proc, per request by
minute and per operation (Neo4j's net of its idle rate), and the statement histograms."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from palimpsest_bench import load_profile as prof
from palimpsest_bench import load_readers as readers
from palimpsest_bench.load_figures import Results, summary
from tests.unit.bench.fake_proc import TICKS, FakeProc, histograms, metrics


def mark(at: float, api: float, neo4j: float, text: str | None = None) -> prof.Mark:
    statements = histograms(text) if text else None
    operations = readers.parse_histograms(text, readers.OPERATION_METRIC, "field") if text else None
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
    reader = readers.CpuReader({"api": [20], "neo4j": [30], "generator": [10]}, proc, TICKS)
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
    profiler = prof.Profiler(readers.CpuReader({}, FakeProc({}), TICKS), None)
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
