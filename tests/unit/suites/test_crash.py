"""The crash suite's pure part: how its spans are planned over runs."""

from __future__ import annotations

from palimpsest_suites import crash


def test_the_crash_plan_spreads_spans_over_runs_with_unique_source_ids() -> None:
    planned = crash.plan("t", 100, users=2, sessions=3)
    assert len(planned) == 6
    assert sum(len(p.spans) for p in planned) == 100
    ids = [(p.who.run_id, s.source_id) for p in planned for s in p.spans]
    assert len(set(ids)) == 100
    assert {p.who.user_id for p in planned} == {"user-0", "user-1"}
    assert all(p.who.session_id == p.who.run_id for p in planned)
