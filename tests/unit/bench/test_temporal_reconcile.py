"""``--order`` and ``--reconcile`` of the temporal evals: the pure planning."""

from __future__ import annotations

from datetime import UTC, datetime

from palimpsest.ontology import parse_ontology
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench import temporal_reconcile as rec


def y(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def spouse(name: str, start: int, end: int | None) -> FactDraft:
    return FactDraft(
        subject=EntityRef("entity", "Aaron"),
        predicate="isMarriedTo",
        object=EntityRef("entity", name),
        object_value=None,
        valid_at=y(start),
        invalid_at=y(end) if end else None,
    )


def test_an_end_that_is_the_next_values_start_is_left_to_the_store() -> None:
    drafts = [spouse("A", 1950, 1960), spouse("B", 1960, 1970), spouse("C", 1975, 1990)]
    out = rec.as_runtime(drafts, {"isMarriedTo"})
    # A ends where B starts: sent open, the store closes it. B ends before C starts (a gap)
    # and C ends with nothing after it: both keep their ends.
    assert [d.invalid_at for d in out] == [None, y(1970), y(1990)]


def test_many_valued_relations_are_sent_as_they_are() -> None:
    drafts = [spouse("A", 1950, 1960), spouse("B", 1960, None)]
    assert rec.as_runtime(drafts, {"playsFor"}) == drafts


def test_orders_are_permutations_and_shuffled_is_seeded() -> None:
    items = list(range(50))
    assert rec.ordered(items, rec.Order.SORTED, 1) == items
    assert rec.ordered(items, rec.Order.REVERSED, 1) == items[::-1]
    shuffled = rec.ordered(items, rec.Order.SHUFFLED, 1)
    assert sorted(shuffled) == items
    assert shuffled != items
    assert shuffled == rec.ordered(items, rec.Order.SHUFFLED, 1)


def test_the_declared_ontology_parses_and_names_every_relation_once() -> None:
    for dataset, kind in (("situatedqa", "question"), ("yago11k", "entity")):
        parsed = parse_ontology(rec.ontology(dataset))
        for relation in rec.SINGLE[dataset]:
            assert parsed.single_spellings(kind, relation), (dataset, relation)
        for relation in rec.MANY[dataset]:
            assert not parsed.single_spellings(kind, relation), (dataset, relation)
        assert not set(rec.SINGLE[dataset]) & set(rec.MANY[dataset])
