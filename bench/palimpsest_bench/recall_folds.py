"""Per-conversation figures for ``palimpsest eval locomo --folds`` (pure; no database).

A fold is one conversation (a LoCoMo ``sample_id``, the owner of its questions). For each, the
headline metrics (categories 1-4) and the per-category ones, with all levers and with each
lever removed in turn (the rankings ``--ablate`` makes). ``holds`` counts, per lever and
metric, the conversations where removing the lever lowers the figure (it helps there) and
where it raises it (it harms there): the "gain holds in at least 4 of 5" test of issue 28.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from palimpsest_bench.recall_data import Dataset, Query
from palimpsest_bench.recall_metrics import score
from palimpsest_bench.recall_summary import HEADLINE_CATEGORIES, summarise

FOLD_METRICS = ("recall@10", "ndcg@10")
ALL = "all"


def _figures(ds: Dataset, rows: Sequence[tuple[Query, dict[str, float]]]) -> dict[str, Any]:
    headline, by_category = summarise(ds, rows)
    out: dict[str, Any] = {name: headline.get(name, 0.0) for name in FOLD_METRICS}
    out["by_category"] = {
        cat: {"name": row["name"], "n": row["n"], **{m: row[m] for m in FOLD_METRICS}}
        for cat, row in (by_category or {}).items()
    }
    return out


def fold_table(
    ds: Dataset, variants: Mapping[str, Sequence[Sequence[str]]]
) -> list[dict[str, Any]]:
    """``variants``: ``all`` and ``-<lever>`` -> one ranking per query of ``ds.queries``."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(ds.queries):
        groups[q.owner].append(i)
    table: list[dict[str, Any]] = []
    for owner, idx in groups.items():
        per: dict[str, dict[str, Any]] = {}
        for name, rankings in variants.items():
            rows = [
                (ds.queries[i], score(ds.name, rankings[i], ds.queries[i].relevant)) for i in idx
            ]
            per[name] = _figures(ds, rows)
        table.append(
            {
                "conversation": owner,
                "n": sum(1 for i in idx if ds.queries[i].category in HEADLINE_CATEGORIES),
                ALL: per[ALL],
                "without": {name.removeprefix("-"): f for name, f in per.items() if name != ALL},
            }
        )
    return table


def holds(
    folds: Sequence[Mapping[str, Any]], metrics: Sequence[str] = FOLD_METRICS
) -> dict[str, dict[str, dict[str, int]]]:
    """Per lever and metric: in how many folds the lever helps, harms, or changes nothing."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for fold in folds:
        for lever, figures in fold["without"].items():
            for metric in metrics:
                gain = fold[ALL][metric] - figures[metric]
                row = out.setdefault(lever, {}).setdefault(
                    metric, {"helps": 0, "harms": 0, "same": 0}
                )
                row["helps" if gain > 0 else "harms" if gain < 0 else "same"] += 1
    return out
