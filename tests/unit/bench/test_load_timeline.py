"""The load bench's figures over time: a server that slows as the run goes on shows by minute,
and each minute says which operation grew."""

from __future__ import annotations

from palimpsest_bench.load import by_window


def test_requests_fall_into_the_window_they_were_due_in() -> None:
    timeline = [
        (0.5, 10.0, True, "recall"),
        (59.9, 30.0, True, "kv_read"),
        (60.0, 900.0, False, "recall"),
        (125.0, 5.0, True, "kv_read"),
    ]
    assert by_window(timeline, 60.0) == [
        {
            "from_s": 0,
            "requests": 2,
            "p50_ms": 20.0,
            "p95_ms": 29.0,
            "errors": 0,
            "p50_ms_by_operation": {"kv_read": 30.0, "recall": 10.0},
        },
        {
            "from_s": 60,
            "requests": 1,
            "p50_ms": 900.0,
            "p95_ms": 900.0,
            "errors": 1,
            "p50_ms_by_operation": {"recall": 900.0},
        },
        {
            "from_s": 120,
            "requests": 1,
            "p50_ms": 5.0,
            "p95_ms": 5.0,
            "errors": 0,
            "p50_ms_by_operation": {"kv_read": 5.0},
        },
    ]
