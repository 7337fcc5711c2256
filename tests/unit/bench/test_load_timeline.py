"""The load bench's figures over time: a server that slows as the run goes on shows by minute,
and each minute says which operation grew."""

from __future__ import annotations

import os
from pathlib import Path

from palimpsest_bench.load_figures import by_window
from palimpsest_bench.recall_load import cpu_steal_seconds, stolen_since


def test_requests_fall_into_the_window_they_were_due_in() -> None:
    timeline = [
        (0.5, 10.0, True, "recall"),
        (59.9, 30.0, True, "kv_read"),
        (60.0, 900.0, False, "recall"),
        (125.0, 5.0, True, "kv_read"),
    ]
    assert by_window(timeline, 60.0) == [
        {
            "from_s": 0,
            "requests": 2,
            "p50_ms": 20.0,
            "p95_ms": 29.0,
            "errors": 0,
            "p50_ms_by_operation": {"kv_read": 30.0, "recall": 10.0},
        },
        {
            "from_s": 60,
            "requests": 1,
            "p50_ms": 900.0,
            "p95_ms": 900.0,
            "errors": 1,
            "p50_ms_by_operation": {"recall": 900.0},
        },
        {
            "from_s": 120,
            "requests": 1,
            "p50_ms": 5.0,
            "p95_ms": 5.0,
            "errors": 0,
            "p50_ms_by_operation": {"kv_read": 5.0},
        },
    ]


def test_each_window_says_how_much_cpu_the_hypervisor_took_in_it() -> None:
    timeline = [(1.0, 10.0, True, "kv_read"), (61.0, 10.0, True, "kv_read")]
    steal = [(0.0, 100.0), (30.0, 100.5), (59.0, 101.0), (60.5, 101.0), (119.0, 104.25)]
    windows = by_window(timeline, 60.0, steal)
    assert [w["cpu_steal_s"] for w in windows] == [1.0, 3.25]


def test_cpu_steal_is_read_from_the_kernel_where_there_is_one() -> None:
    stat = Path("/proc/stat")
    if not stat.exists():
        assert cpu_steal_seconds() is None
        return

    def steal() -> float:  # the eighth number of the "cpu" line, in clock ticks
        return int(stat.read_text().split("\n", 1)[0].split()[8]) / os.sysconf("SC_CLK_TCK")

    before = steal()
    stolen = cpu_steal_seconds()
    after = steal()
    assert stolen is not None
    assert before <= stolen <= after


def test_steal_since_a_reading_is_what_the_counter_grew_by() -> None:
    assert stolen_since(None) is None
    before = cpu_steal_seconds()
    if before is None:
        return  # no /proc/stat: nothing to measure
    grew = stolen_since(before)
    assert grew is not None
    assert 0.0 <= grew <= 1.0  # a moment's steal
