"""The client's wire codec (``client.wire``): dates and times come back as Python values."""

from __future__ import annotations

from datetime import UTC, date, datetime

from palimpsest.client.recall_results import TimeRange
from palimpsest.client.wire import decode, encode


def test_a_time_range_decodes_to_dates() -> None:
    found = decode(list[TimeRange], [{"start": "2023-05-06", "end": "2023-05-07"}])
    assert found == [TimeRange(date(2023, 5, 6), date(2023, 5, 7))]


def test_dates_and_times_encode_as_iso_text() -> None:
    assert encode(date(2023, 5, 6)) == "2023-05-06"
    assert encode([datetime(2023, 5, 6, 12, tzinfo=UTC)]) == ["2023-05-06T12:00:00+00:00"]
