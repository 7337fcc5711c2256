"""``queue`` (``resolvers.queue``) on a recording executor: a lease that lost the race tries
again a bounded number of times, exhausted spans are reported, leased spans decode with the
run's grants, and failures are stored bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.cycle import queue
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

REF = resolve_scope(principal(), Scope.USER)
SPAN = "5" * 32


def span_row(**changes: Any) -> Row:
    return {
        "id": SPAN,
        "seq": 3,
        "text": "hello",
        "speaker": "alice",
        "role": "user",
        "observed_at": NOW,
        "facts": None,
        "source_id": None,
        "compaction_generation": None,
        "session_id": "s",
        "run_id": "r",
        "agent_name": "planner",
        "model": None,
        "grant_memory": ["USER", "AGENT"],
        "grant_sql": None,
        "isolated": False,
        "attempts": 1,
        "takeovers": 0,
        **changes,
    }


class Race:
    """``LOCK_LEASABLE`` finds spans each time; ``LEASE_SPANS`` wins from try ``wins_at``."""

    def __init__(self, wins_at: int | None, dead: list[str] | None = None) -> None:
        self.wins_at = wins_at
        self.dead = dead or []
        self.tries = 0

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "LOCK_LEASABLE":
            self.tries += 1
            return [{"id": SPAN}]
        if statement.name == "EXHAUST_SPANS":
            return [{"id": i} for i in self.dead]
        if statement.name == "LEASE_SPANS":
            return [{"span": span_row()}] if self.tries == self.wins_at else []
        return []


async def test_a_lease_that_lost_the_race_tries_again(tmp_path: Path) -> None:
    race = Race(wins_at=2)
    svc, recorder = services(race, tmp_path)
    got = await queue.lease(svc, REF, "w1", 10, 30.0, 5)
    assert [s.id for s in got.spans] == [SPAN]
    assert not got.contended
    assert len(recorder.transactions) == 2
    assert recorder.calls[-1].params["until"] == got.until


async def test_a_lease_gives_up_after_its_tries_and_says_it_was_contended(tmp_path: Path) -> None:
    svc, recorder = services(Race(wins_at=None), tmp_path)
    got = await queue.lease(svc, REF, "w1", 10, 30.0, 5)
    assert got.spans == []
    assert got.contended
    assert len(recorder.transactions) == queue.LEASE_TRIES


async def test_an_empty_queue_is_not_contention_and_is_not_retried(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    got = await queue.lease(svc, REF, "w1", 10, 30.0, 5)
    assert not got.contended
    assert recorder.names() == ["LOCK_LEASABLE"]


async def test_exhausted_spans_are_reported_even_when_none_was_leased(tmp_path: Path) -> None:
    svc, recorder = services(Race(wins_at=None, dead=[SPAN]), tmp_path)
    got = await queue.lease(svc, REF, "w1", 10, 30.0, 5)
    assert got.dead == [SPAN]
    assert len(recorder.transactions) == 1


async def test_a_leased_span_carries_its_runs_grants(tmp_path: Path) -> None:
    svc, _ = services(Race(wins_at=1), tmp_path)
    (span,) = (await queue.lease(svc, REF, "w1", 10, 30.0, 5)).spans
    assert span.run.memory_scopes == frozenset({Scope.USER, Scope.AGENT})
    assert span.run.sql_scopes is None  # no grant named: the token's defaults, not "none"
    assert (span.seq, span.facts) == (3, ())


async def test_a_failure_is_stored_bounded(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [{"id": SPAN, "exhausted": 1}], tmp_path)
    got = await queue.fail(svc, REF, "w1", [(SPAN, "x" * 10_000)], 5, 2.0)
    assert got == [(SPAN, True)]
    (call,) = recorder.calls
    assert call.write
    assert len(call.params["failures"][0]["error"]) == queue.MAX_ERROR
    assert call.params["scope_key"] == REF.scope_key
