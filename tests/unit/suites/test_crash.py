"""The crash suite's pure part: how its spans are planned over runs."""

from __future__ import annotations

import random

from palimpsest_suites import crash


def test_the_crash_plan_spreads_spans_over_runs_with_unique_source_ids() -> None:
    planned = crash.plan("t", 100, users=2, sessions=3)
    assert len(planned) == 6
    assert sum(len(p.spans) for p in planned) == 100
    ids = [(p.who.run_id, s.source_id) for p in planned for s in p.spans]
    assert len(set(ids)) == 100
    assert {p.who.user_id for p in planned} == {"user-0", "user-1"}
    assert all(p.who.session_id == p.who.run_id for p in planned)


def test_long_messages_span_the_range() -> None:
    rng = random.Random(3)
    sizes = [len(crash.long_message(rng, i)) for i in range(300)]
    low, high = crash.LONG_CHARS
    assert min(sizes) >= low
    assert max(sizes) <= high
    assert max(sizes) - min(sizes) > (high - low) // 2  # spread over the range, not one size


def test_the_plan_is_long_only_when_asked() -> None:
    short = [s.text for p in crash.plan("t", 20, 1, 2) for s in p.spans]
    long = [s.text for p in crash.plan("t", 20, 1, 2, long=True) for s in p.spans]
    assert max(map(len, short)) < crash.LONG_CHARS[0] <= min(map(len, long))
