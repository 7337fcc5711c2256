"""BEAM's figures from ranked unit ids (pure; ``eval beam``).

Per question with evidence: recall_any@10 (any evidence message in the top 10), recall_all@10
(all of them), binary-gain nDCG@10, averaged overall and per question type. For knowledge-update
questions also whether the newer statement ranks first: the best-ranked ``updated_info``
message above the best-ranked ``original_info`` one. A tie (one message in both parts) and a
ranking holding neither count as not; an updated message found with the original missing
counts as first. Per conversation (``--folds``), the same figures with all levers and with each
removed in turn, and in how many conversations each lever helps or harms.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from palimpsest_bench.beam_data import Beam
from palimpsest_bench.recall_data import Query
from palimpsest_bench.recall_metrics import mean_metrics, score

METRICS = ("recall_any@10", "recall_all@10", "ndcg@10")
NEWER_FIRST = "knowledge_update_newer_first"
UPDATE_TYPE = "knowledge_update"
ORIGINAL = "original_info"
UPDATED = "updated_info"
ALL = "all"


def best_rank(ranked: Sequence[str], ids: Iterable[str]) -> int | None:
    """The 0-based position of the first of ``ids`` in ``ranked``; None when none is there."""
    wanted = set(ids)
    return next((i for i, r in enumerate(ranked) if r in wanted), None)


def newer_first(ranked: Sequence[str], original: Iterable[str], updated: Iterable[str]) -> bool:
    new = best_rank(ranked, updated)
    old = best_rank(ranked, original)
    if new is None:
        return False
    return old is None or new < old


def update_pairs(beam: Beam, queries: Sequence[Query]) -> list[int]:
    """The positions in ``queries`` of knowledge-update questions with both parts labelled."""
    out: list[int] = []
    for i, q in enumerate(queries):
        parts = beam.parts.get(q.id, {})
        if q.category == UPDATE_TYPE and parts.get(ORIGINAL) and parts.get(UPDATED):
            out.append(i)
    return out


def newer_first_share(
    beam: Beam, queries: Sequence[Query], rankings: Sequence[Sequence[str]]
) -> tuple[float, int]:
    """The share of labelled knowledge-update questions ranking the newer first, and their n."""
    pairs = update_pairs(beam, queries)
    if not pairs:
        return 0.0, 0
    hits = sum(
        newer_first(
            rankings[i], beam.parts[queries[i].id][ORIGINAL], beam.parts[queries[i].id][UPDATED]
        )
        for i in pairs
    )
    return round(hits / len(pairs), 4), len(pairs)


def figures(
    beam: Beam, queries: Sequence[Query], rankings: Sequence[Sequence[str]]
) -> dict[str, Any]:
    """``metrics``, ``by_type`` and the newer-first share of ``queries`` ranked as given."""
    rows = [score("beam", r, q.relevant) for q, r in zip(queries, rankings, strict=True)]
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q, row in zip(queries, rows, strict=True):
        groups[q.category or "?"].append(row)
    share, n = newer_first_share(beam, queries, rankings)
    return {
        "metrics": mean_metrics(rows) or dict.fromkeys(METRICS, 0.0),
        "by_type": {t: {"n": len(g), **mean_metrics(g)} for t, g in sorted(groups.items())},
        NEWER_FIRST: share,
        "newer_first_n": n,
    }


def details(
    beam: Beam, queries: Sequence[Query], rankings: Sequence[Sequence[str]]
) -> list[dict[str, Any]]:
    """Per question: the 1-based rank of each evidence message in the top 10 (null: not
    there), by labelled part when the question has parts, and the ranked messages
    (``--details``)."""

    def rank(ranked: Sequence[str], unit: str) -> int | None:
        found = best_rank(ranked, (unit,))
        return None if found is None else found + 1

    out: list[dict[str, Any]] = []
    for q, ranked in zip(queries, rankings, strict=True):
        parts = beam.parts.get(q.id, {})
        row: dict[str, Any] = {
            "question": q.id,
            "type": q.category,
            "ranks": {u: rank(ranked, u) for u in sorted(q.relevant)},
            "ranked": list(ranked),  # the whole answer, best first (levers replayed offline)
        }
        if parts:
            row["parts"] = {
                name: {u: rank(ranked, u) for u in sorted(units)}
                for name, units in sorted(parts.items())
            }
        out.append(row)
    return out


def fold_table(beam: Beam, variants: Mapping[str, Sequence[Sequence[str]]]) -> list[dict[str, Any]]:
    """``variants``: ``all`` and ``-<lever>`` -> one ranking per question of the dataset."""
    queries = beam.dataset.queries
    groups: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(queries):
        groups[q.owner].append(i)
    table: list[dict[str, Any]] = []
    for owner, idx in groups.items():
        mine = [queries[i] for i in idx]
        per: dict[str, dict[str, Any]] = {}
        for name, rankings in variants.items():
            f = figures(beam, mine, [rankings[i] for i in idx])
            per[name] = {**f["metrics"], NEWER_FIRST: f[NEWER_FIRST]}
        table.append(
            {
                "conversation": owner,
                "n": len(idx),
                ALL: per[ALL],
                "without": {name.removeprefix("-"): f for name, f in per.items() if name != ALL},
            }
        )
    return table


FOLD_METRICS = (*METRICS, NEWER_FIRST)
