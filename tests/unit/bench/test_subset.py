"""eval --limit loads only what the kept queries need."""

from __future__ import annotations

from palimpsest_bench.recall_data import Dataset, Doc, Query
from palimpsest_bench.subset import limit_dataset


def _doc(owner: str, *units: str) -> Doc:
    return Doc(owner=owner, title=units[0], observed_at=None, units=tuple((u, u) for u in units))


def _query(i: int, owner: str, *relevant: str) -> Query:
    return Query(id=str(i), owner=owner, text=f"q{i}", relevant=frozenset(relevant))


def test_per_owner_datasets_keep_only_the_kept_queries_owners() -> None:
    ds = Dataset(
        "locomo",
        [_doc("conv-1", "a", "b"), _doc("conv-2", "c"), _doc("conv-1", "d"), _doc("conv-3", "e")],
        [_query(1, "conv-1", "a"), _query(2, "conv-3", "e"), _query(3, "conv-2", "c")],
    )
    small = limit_dataset(ds, 2)
    assert [q.id for q in small.queries] == ["1", "2"]
    assert [d.units[0][0] for d in small.docs] == ["a", "d", "e"]  # all of conv-1 and conv-3


def test_shared_owner_datasets_keep_relevant_documents_and_some_distractors() -> None:
    docs = [_doc("eval", f"u{i}") for i in range(100)]
    ds = Dataset(
        "scifact",
        docs,
        [_query(1, "eval", "u50"), _query(2, "eval", "u99", "u7"), _query(3, "eval", "u3")],
        by_document=True,
    )
    small = limit_dataset(ds, 2, distractors=3)
    kept = [d.units[0][0] for d in small.docs]
    assert {"u50", "u99", "u7"} <= set(kept)  # every relevant document of the kept queries
    assert len(kept) == 3 + 2 * 3  # plus three distractors per kept query
    assert kept == sorted(kept, key=lambda u: int(u[1:]))  # dataset order is kept
    assert small.by_document
