"""``eval locomo --folds``: per-conversation figures and the helps/harms count (synthetic)."""

from __future__ import annotations

from palimpsest_bench.recall_data import Dataset, Query
from palimpsest_bench.recall_folds import ALL, fold_table, holds


def _ds() -> Dataset:
    queries = [
        Query("a1", "conv-a", "?", frozenset({"A:1"}), "1"),
        Query("a2", "conv-a", "?", frozenset({"A:2"}), "2"),
        Query("b1", "conv-b", "?", frozenset({"B:1"}), "1"),
        Query("b5", "conv-b", "?", frozenset({"B:5"}), "5"),
    ]
    return Dataset("locomo", [], queries)


def test_fold_table_splits_by_conversation_with_and_without_each_lever() -> None:
    ds = _ds()
    variants = {
        ALL: [["A:1"], ["A:2"], ["B:1"], ["x"]],
        "-speaker_boost": [["A:1"], ["x"], ["x"], ["B:5"]],
    }
    folds = fold_table(ds, variants)
    assert [f["conversation"] for f in folds] == ["conv-a", "conv-b"]
    a, b = folds
    assert a["n"] == 2  # category 5 is outside the headline
    assert b["n"] == 1
    assert a[ALL]["recall@10"] == 1.0
    assert a["without"]["speaker_boost"]["recall@10"] == 0.5
    assert b["without"]["speaker_boost"]["recall@10"] == 0.0
    assert b["without"]["speaker_boost"]["by_category"]["5"]["recall@10"] == 1.0
    assert a[ALL]["by_category"]["2"] == {
        "name": "temporal",
        "n": 1,
        "recall@10": 1.0,
        "ndcg@10": 1.0,
    }


def test_holds_counts_the_folds_where_a_lever_helps_or_harms() -> None:
    ds = _ds()
    variants = {
        ALL: [["A:1"], ["x"], ["B:1"], ["x"]],
        "-date_boost": [["x"], ["A:2"], ["x"], ["x"]],  # a: same, b: helps
        "-when_boost": [["A:1"], ["A:2"], ["B:1"], ["x"]],  # a: harms, b: same
    }
    counted = holds(fold_table(ds, variants))
    assert counted["date_boost"]["recall@10"] == {"helps": 1, "harms": 0, "same": 1}
    assert counted["when_boost"]["recall@10"] == {"helps": 0, "harms": 1, "same": 1}
