"""BEAM's figures on hand-made rankings: recall_all, nDCG, newer-first with ties and misses,
the per-type table and the per-conversation folds."""

from __future__ import annotations

import math

import pytest

from palimpsest_bench.beam_data import Beam
from palimpsest_bench.beam_metrics import (
    ALL,
    FOLD_METRICS,
    NEWER_FIRST,
    best_rank,
    details,
    figures,
    fold_table,
    newer_first,
)
from palimpsest_bench.recall_data import Dataset, Query
from palimpsest_bench.recall_folds import holds
from palimpsest_bench.recall_metrics import all_at_k, ndcg_at_k, score


def test_recall_all_needs_every_evidence_message_in_the_top_k() -> None:
    assert all_at_k(["a", "b", "c"], {"a", "c"}, 3) == 1.0
    assert all_at_k(["a", "b", "c"], {"a", "c"}, 2) == 0.0
    assert all_at_k(["a"], set(), 10) == 0.0


def test_ndcg_is_binary_gain_over_the_ideal_order() -> None:
    assert ndcg_at_k(["a", "b"], {"a", "b"}, 10) == 1.0
    # One of two found at rank 2: (1/log2(3)) / (1 + 1/log2(3)).
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a"], {"a", "b"}, 10) == pytest.approx(expected)


def test_score_names_beams_metrics() -> None:
    assert score("beam", ["x", "a", "y"], {"a", "b"}) == {
        "recall_any@10": 1.0,
        "recall_all@10": 0.0,
        "ndcg@10": pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3))),
    }


def test_newer_first_with_ties_and_missing_messages() -> None:
    assert best_rank(["x", "b", "a"], {"a", "b"}) == 1
    assert best_rank(["x"], {"a"}) is None
    assert newer_first(["new", "old"], {"old"}, {"new"})
    assert not newer_first(["old", "new"], {"old"}, {"new"})
    # One message labelled both original and updated: a tie, not first.
    assert not newer_first(["both"], {"both"}, {"both"})
    # The updated one found, the original not: first.
    assert newer_first(["x", "new"], {"old"}, {"new"})
    # The original found, the updated not; neither found.
    assert not newer_first(["old"], {"old"}, {"new"})
    assert not newer_first(["x"], {"old"}, {"new"})
    # Several messages per part: the best-ranked of each.
    assert newer_first(["o2", "n1", "o1"], {"o1"}, {"n1", "n2"})
    assert not newer_first(["o2", "n1"], {"o1", "o2"}, {"n1"})


def _beam() -> Beam:
    queries = [
        Query("a#ku#0", "a", "?", frozenset({"a:1", "a:2"}), "knowledge_update"),
        Query("a#ie#0", "a", "?", frozenset({"a:3"}), "information_extraction"),
        Query("b#ku#0", "b", "?", frozenset({"b:1", "b:2"}), "knowledge_update"),
        Query("b#ku#1", "b", "?", frozenset({"b:5"}), "knowledge_update"),  # no parts
    ]
    parts = {
        "a#ku#0": {"original_info": frozenset({"a:1"}), "updated_info": frozenset({"a:2"})},
        "a#ie#0": {},
        "b#ku#0": {"original_info": frozenset({"b:1"}), "updated_info": frozenset({"b:2"})},
        "b#ku#1": {},
    }
    return Beam(Dataset("beam", [], queries), parts)


def test_figures_by_type_and_newer_first_share() -> None:
    beam = _beam()
    rankings = [["a:2", "a:1"], ["x"], ["b:1", "b:2"], ["b:5"]]
    got = figures(beam, beam.dataset.queries, rankings)
    assert got["metrics"]["recall_any@10"] == 0.75
    assert got["metrics"]["recall_all@10"] == 0.75
    assert got["by_type"]["knowledge_update"]["n"] == 3
    assert got["by_type"]["knowledge_update"]["recall_all@10"] == 1.0
    assert got["by_type"]["information_extraction"] == {
        "n": 1,
        "recall_any@10": 0.0,
        "recall_all@10": 0.0,
        "ndcg@10": 0.0,
    }
    # Two labelled pairs: a's updated first, b's original first.
    assert got[NEWER_FIRST] == 0.5
    assert got["newer_first_n"] == 2


def test_folds_count_where_a_lever_helps_per_conversation() -> None:
    beam = _beam()
    variants = {
        ALL: [["a:2", "a:1"], ["a:3"], ["b:1", "b:2"], ["b:5"]],
        "-newer_first": [["a:1", "a:2"], ["a:3"], ["b:1", "b:2"], ["b:5"]],
    }
    folds = fold_table(beam, variants)
    assert [(f["conversation"], f["n"]) for f in folds] == [("a", 2), ("b", 2)]
    assert folds[0][ALL][NEWER_FIRST] == 1.0
    assert folds[0]["without"]["newer_first"][NEWER_FIRST] == 0.0
    counted = holds(folds, FOLD_METRICS)
    assert counted["newer_first"][NEWER_FIRST] == {"helps": 1, "harms": 0, "same": 1}
    assert counted["newer_first"]["recall_any@10"] == {"helps": 0, "harms": 0, "same": 2}


def test_details_give_each_evidence_message_its_rank_by_part() -> None:
    beam = _beam()
    rows = details(beam, beam.dataset.queries[:2], [["x", "a:2"], ["a:3"]])
    assert rows == [
        {
            "question": "a#ku#0",
            "type": "knowledge_update",
            "ranks": {"a:1": None, "a:2": 2},
            "ranked": ["x", "a:2"],
            "parts": {"original_info": {"a:1": None}, "updated_info": {"a:2": 2}},
        },
        {
            "question": "a#ie#0",
            "type": "information_extraction",
            "ranks": {"a:3": 1},
            "ranked": ["a:3"],
        },
    ]
