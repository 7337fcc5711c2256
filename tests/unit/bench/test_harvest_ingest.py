"""The memory-cycle harnesses' pure parts: how LoCoMo lines become spans, how load is planned."""

from __future__ import annotations

from datetime import UTC, datetime

from palimpsest.domain.documents.conversation import turn_text
from palimpsest_bench import cycle_bench, harvest_ingest


def test_a_locomo_line_becomes_a_span_whose_turn_is_the_same_line() -> None:
    line = "Caroline: I went to a support group: it helped."
    span = harvest_ingest.span_of("D1:3", line, "2023")
    assert (span.speaker, span.text, span.source_id) == (
        "Caroline",
        "I went to a support group: it helped.",
        "D1:3",
    )
    assert (
        turn_text(span.speaker, span.text)[0] == "Caroline: I went to a support group: it helped."
    )
    assert span.observed_at == datetime(2023, 1, 1, tzinfo=UTC)


def test_a_line_without_a_speaker_is_sent_whole() -> None:
    for line in ("no colon here", ": starts with one", "Speaker: "):
        span = harvest_ingest.span_of("u", line, None)
        assert (span.speaker, span.text) == (None, line)


def test_the_crash_plan_spreads_spans_over_runs_with_unique_source_ids() -> None:
    planned = cycle_bench.plan("t", 100, users=2, sessions=3)
    assert len(planned) == 6
    assert sum(len(p.spans) for p in planned) == 100
    ids = [(p.who.run_id, s.source_id) for p in planned for s in p.spans]
    assert len(set(ids)) == 100
    assert {p.who.user_id for p in planned} == {"user-0", "user-1"}
    assert all(p.who.session_id == p.who.run_id for p in planned)
