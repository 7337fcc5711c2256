"""The memory-cycle harnesses' pure parts: how LoCoMo lines become spans."""

from __future__ import annotations

from datetime import UTC, datetime

from palimpsest.domain.documents.conversation import turn_text
from palimpsest_bench import harvest_ingest


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
