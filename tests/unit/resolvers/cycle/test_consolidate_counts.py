"""The extractors' counts through a consolidation's outcome and the worker's summary."""

from __future__ import annotations

from palimpsest.jobs.consolidator import Totals
from palimpsest.resolvers.cycle.consolidate import Outcome


def test_outcomes_add_their_extraction_counts_by_name() -> None:
    a = Outcome(leased=2, consolidated=2, extraction=(("facts", 3), ("tokens_in", 900)))
    b = Outcome(leased=1, consolidated=1, extraction=(("extraction_failed", 1), ("facts", 1)))
    total = a + b
    assert (total.leased, total.consolidated) == (3, 3)
    assert total.counted("facts") == 4
    assert total.counted("tokens_in") == 900
    assert total.counted("extraction_failed") == 1
    assert total.counted("dropped") == 0


def test_the_summary_shows_the_extraction_counts_that_are_not_zero() -> None:
    totals = Totals()
    totals.add(Outcome(leased=1, consolidated=1))
    assert "facts" not in totals.as_dict()  # no extractor counted anything: nothing shown
    totals.add(Outcome(extraction=(("facts", 2), ("tokens_in", 800), ("tokens_out", 60))))
    totals.add(Outcome(extraction=(("extraction_failed", 1), ("calls", 2))))
    summary = totals.as_dict()
    assert {k: summary[k] for k in ("facts", "tokens_in", "tokens_out", "extraction_failed")} == {
        "facts": 2,
        "tokens_in": 800,
        "tokens_out": 60,
        "extraction_failed": 1,
    }
    assert "calls" not in summary
    assert "dropped" not in summary
