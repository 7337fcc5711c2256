"""``bench vector-options``' pure parts: the option pairs named, and each pair's figures."""

from __future__ import annotations

import pytest

from palimpsest_bench import vector_options as vo


def test_pairs_are_exact_rows_then_floor_in_the_order_given() -> None:
    assert vo.parse_options("2000:100, 20000:200") == [(2000, 100), (20000, 200)]
    assert vo.name((2000, 100)) == "exact<=2000,floor=100"


@pytest.mark.parametrize("text", ["", "2000", "2000:0", "a:100", "2000:100,2000:100", "1:-1"])
def test_what_is_not_a_list_of_pairs_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="pair"):
        vo.parse_options(text)


def test_a_pairs_figures_are_its_mean_and_worst_overlap_and_its_time() -> None:
    tally = vo.Tally(overlaps=[1.0, 0.9, 0.8, 1.0], ms=[float(v) for v in range(1, 101)][:4])
    figures = tally.figures()
    assert figures["overlap"] == 0.925
    assert figures["min_overlap"] == 0.8
    assert figures["p50_ms"] <= figures["p95_ms"] <= 4.0
