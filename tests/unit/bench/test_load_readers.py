"""What a load run samples: CPU per process tree from a /proc line and table, and what ran
between two scrapes of the exported histograms."""

from __future__ import annotations

import os

import pytest

from palimpsest_bench import load_readers as readers
from tests.unit.bench.fake_proc import TICKS, FakeProc, histograms, metrics, stat_line


def test_a_stat_line_is_read_after_the_last_parenthesis_of_the_name() -> None:
    line = stat_line(7, "uvicorn (worker) x", 3, utime=250, stime=50)
    assert readers.parse_stat(line, TICKS) == (3, 3.0)


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
    reader = readers.CpuReader({"generator": [10], "api": [20], "neo4j": [30]}, proc, TICKS)
    assert reader.read() == {"generator": 1.0, "api": 5.1, "neo4j": 15.0}


def test_a_group_whose_process_is_gone_reads_zero() -> None:
    reader = readers.CpuReader({"neo4j": [], "api": [5]}, FakeProc({}), TICKS)
    assert reader.read() == {"neo4j": 0.0, "api": 0.0}


def test_the_kernels_own_table_is_read_for_this_process() -> None:
    if not os.path.exists("/proc/self/stat"):
        pytest.skip("no /proc here")
    reader = readers.CpuReader({"generator": [os.getpid()]})
    first = reader.read()["generator"]
    sum(i * i for i in range(300_000))  # spend some CPU
    assert reader.read()["generator"] >= first > 0


def test_a_window_of_the_histograms_counts_what_ran_between_two_scrapes() -> None:
    before = histograms(metrics(g5=10, g10=10, gn=10, gsum=0.02, osum=0.05))
    # 100 more reads: 90 under 5 ms, 6 more under 10 ms, 4 slower; 0.5 s in all. No upserts.
    after = histograms(metrics(g5=100, g10=106, gn=110, gsum=0.52, osum=1.0))
    assert readers.histogram_window(before, after) == {
        "GET_MEMORY": {"n": 100, "mean_ms": 5.0, "p95_le_ms": 10.0},
    }
    # From nothing (the first scrape of a fresh server) every series counts whole; a 95th
    # percentile past the last finite bound has none.
    assert readers.histogram_window({}, before)["UPSERT_MEMORY"] == {
        "n": 4,
        "mean_ms": 50.0,
        "p95_le_ms": None,
    }
