"""``eval --limit N``: the first N queries and only the documents they need, loaded.

A smaller load keeps a quick check quick. Documents of owners that none of the kept queries
asks about are left out; a query only ever searches its owner's scope, so that changes no
ranking (LoCoMo: one owner per conversation). Where all queries share one owner (SciFact,
TimeQA), the documents holding the kept queries' relevant units are loaded plus, in dataset
order, ``distractors`` other documents per query, so ranking still has to find them among
others. Metrics on a subset are not comparable with a full run; the result says so.
"""

from __future__ import annotations

from dataclasses import replace

from palimpsest_bench.recall_data import Dataset

DISTRACTORS_PER_QUERY = 20


def limit_dataset(ds: Dataset, limit: int, distractors: int = DISTRACTORS_PER_QUERY) -> Dataset:
    queries = ds.queries[:limit]
    owners = {q.owner for q in queries}
    relevant = {unit for q in queries for unit in q.relevant}
    mine = [d for d in ds.docs if d.owner in owners]
    if len(owners) > 1 or len({d.owner for d in ds.docs}) > 1:
        return replace(ds, docs=mine, queries=queries)
    needed = [d for d in mine if any(unit in relevant for unit, _ in d.units)]
    others = [d for d in mine if not any(unit in relevant for unit, _ in d.units)]
    kept = {id(d) for d in needed + others[: distractors * len(queries)]}
    return replace(ds, docs=[d for d in mine if id(d) in kept], queries=queries)
