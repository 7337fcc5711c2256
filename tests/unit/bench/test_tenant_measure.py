"""The many-tenants measure's pure parts: ratios and the alternating order."""

from __future__ import annotations

from palimpsest_bench.tenant_measure import OPERATIONS, ratios, side_order, stage_ratios


def figures(loaded: float, empty: float) -> dict[str, dict[str, dict[str, float]]]:
    return {
        "loaded": {op: {"p50": loaded, "p95": 2 * loaded} for op in OPERATIONS},
        "empty": {op: {"p50": empty, "p95": 4 * empty} for op in OPERATIONS},
    }


def test_ratios_are_loaded_over_empty_per_operation_and_percentile() -> None:
    out = ratios(figures(13.0, 10.0))
    assert out["search_p50_ratio"] == 1.3
    assert out["search_p95_ratio"] == 0.65
    assert set(out) == {f"{op}_{s}_ratio" for op in OPERATIONS for s in ("p50", "p95")}


def test_stage_ratios_cover_stages_both_sides_saw_and_skip_zero() -> None:
    stages = {
        "loaded": {"legs": {"p50": 6.0}, "load": {"p50": 1.0}, "only_loaded": {"p50": 1.0}},
        "empty": {"legs": {"p50": 4.0}, "load": {"p50": 0.0}},
    }
    assert stage_ratios(stages) == {"legs": 1.5}


def test_the_first_database_alternates_round_by_round() -> None:
    assert side_order(0) == ("loaded", "empty")
    assert side_order(1) == ("empty", "loaded")
    firsts = [side_order(r)[0] for r in range(100)]
    assert firsts.count("loaded") == firsts.count("empty") == 50
