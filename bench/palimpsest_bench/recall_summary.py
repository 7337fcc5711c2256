"""A LoCoMo run's figures summarised: the headline over its answerable categories, and one
row per category; other datasets have the mean alone."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from palimpsest_bench.recall_data import Dataset, Query
from palimpsest_bench.recall_metrics import mean_metrics

__all__ = ["HEADLINE_CATEGORIES", "LOCOMO_CATEGORIES", "summarise"]

HEADLINE_CATEGORIES = frozenset({"1", "2", "3", "4"})
LOCOMO_CATEGORIES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}


def summarise(
    ds: Dataset, per_query: Sequence[tuple[Query, dict[str, float]]]
) -> tuple[dict[str, float], dict[str, dict[str, Any]] | None]:
    if ds.name != "locomo":
        return mean_metrics([m for _, m in per_query]), None
    headline = mean_metrics([m for q, m in per_query if q.category in HEADLINE_CATEGORIES])
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q, m in per_query:
        groups[q.category or "?"].append(m)
    by_category: dict[str, dict[str, Any]] = {
        cat: {
            "name": LOCOMO_CATEGORIES.get(cat, cat),
            "n": len(rows),
            **mean_metrics(rows),
        }
        for cat, rows in sorted(groups.items())
    }
    return headline, by_category
