"""``bench load --engines``'s arithmetic: the rounds, their order, each engine's CPU per
request from its rounds (Neo4j's net of its idle rate) and the ratios."""

from __future__ import annotations

import pytest

from palimpsest_bench import load_engines as le
from palimpsest_bench.load_figures import Results


def test_rounds_cut_the_seconds_with_a_shorter_last_one() -> None:
    assert le.rounds_of(60, 20) == [20, 20, 20]
    assert le.rounds_of(50, 20) == [20, 20, 10]
    assert le.rounds_of(5, 20) == [5]


def test_the_order_alternates_by_round() -> None:
    assert le.order_of(("procedure", "cypher"), 0) == ["procedure", "cypher"]
    assert le.order_of(("procedure", "cypher"), 1) == ["cypher", "procedure"]
    assert le.order_of(("procedure", "cypher"), 2) == ["procedure", "cypher"]


def test_an_engines_cpu_per_request_sums_its_rounds_with_neo4j_net_of_idle() -> None:
    tally = le.Tally()
    one = Results(latencies={"kv_read": [1.0, 2.0], "search": [9.0]}, errors={"search": 1})
    two = Results(latencies={"kv_read": [3.0]})
    tally.add({"api": 1.0, "neo4j": 10.0}, {"api": 1.3, "neo4j": 10.5}, one)
    tally.seconds += 10.0
    tally.add({"api": 5.0, "neo4j": 20.0}, {"api": 5.1, "neo4j": 20.3}, two)
    tally.seconds += 10.0
    figures = tally.figures({"neo4j": 10.0})  # 10 ms a second idle: 0.2 s over 20 s
    # API 0.4 s + Neo4j 0.8 - 0.2 s = 1.0 s over 4 requests.
    assert figures["cpu_ms_per_request"] == pytest.approx(250.0)
    assert figures["cpu_ms_per_request_raw"] == pytest.approx(300.0)
    assert figures["requests"] == 4
    assert figures["errors"] == 1
    assert figures["cpu_ms_per_request_by_process"]["api"] == pytest.approx(100.0)


def test_an_engine_without_requests_has_no_figure() -> None:
    assert le.Tally().figures({})["cpu_ms_per_request"] is None


def test_the_ratio_is_each_engine_over_the_last_and_none_without_both() -> None:
    by_engine = {"procedure": {"x": 6.0}, "cypher": {"x": 8.0}}
    assert le.ratio(by_engine, "x") == {"procedure/cypher": 0.75}
    assert le.ratio({"procedure": {"x": None}, "cypher": {"x": 8.0}}, "x") == {
        "procedure/cypher": None
    }
