"""The evaluations' ranking metrics (pure): LoCoMo's hit@k as recall@k (BEAM's recall_any@k),
BEAM's recall_all@k, BEIR's recall@k and binary-gain nDCG@k, MRR@k, and which of them each
dataset reports."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence


def dedupe(ranked: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each id (several chunks of one document count once)."""
    return list(dict.fromkeys(ranked))


def hit_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1.0 when any relevant id is in the top ``k`` (LoCoMo's recall@k), else 0.0."""
    wanted = set(relevant)
    return 1.0 if any(r in wanted for r in ranked[:k]) else 0.0


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """The share of relevant ids found in the top ``k`` (BEIR's recall@k); 0.0 if none."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def all_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1.0 when every relevant id is in the top ``k`` (BEAM's recall_all@k), else 0.0; 0.0
    when there are none."""
    wanted = set(relevant)
    return 1.0 if wanted and wanted <= set(ranked[:k]) else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Binary-gain nDCG@k (log2 discount, ranks from 1): BEIR's metric for 0/1 qrels."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(ranked[:k]) if r in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(wanted), k)))
    return dcg / ideal


def mrr_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1 / rank of the first relevant id within the top ``k``, else 0.0."""
    wanted = set(relevant)
    for i, r in enumerate(ranked[:k], start=1):
        if r in wanted:
            return 1.0 / i
    return 0.0


METRICS: dict[str, Callable[[Sequence[str], Iterable[str]], float]] = {
    "hit@5": lambda r, g: hit_at_k(r, g, 5),
    "hit@10": lambda r, g: hit_at_k(r, g, 10),
    "all@10": lambda r, g: all_at_k(r, g, 10),
    "recall@100": lambda r, g: recall_at_k(r, g, 100),
    "ndcg@10": lambda r, g: ndcg_at_k(r, g, 10),
    "mrr@10": lambda r, g: mrr_at_k(r, g, 10),
}
# Which metric each dataset reports, under which name.
REPORTED: dict[str, dict[str, str]] = {
    "locomo": {
        "recall@5": "hit@5",
        "recall@10": "hit@10",
        "ndcg@10": "ndcg@10",
        "mrr@10": "mrr@10",
    },
    "scifact": {"ndcg@10": "ndcg@10", "recall@100": "recall@100"},
    "timeqa": {"ndcg@10": "ndcg@10", "mrr@10": "mrr@10"},
    "beam": {"recall_any@10": "hit@10", "recall_all@10": "all@10", "ndcg@10": "ndcg@10"},
}


def score(dataset: str, ranked: Sequence[str], relevant: Iterable[str]) -> dict[str, float]:
    gold = list(relevant)
    return {name: METRICS[metric](ranked, gold) for name, metric in REPORTED[dataset].items()}


def mean_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Average each metric over ``rows`` (rounded to 4 places); empty when there are none."""
    if not rows:
        return {}
    return {name: round(sum(r[name] for r in rows) / len(rows), 4) for name in rows[0]}
