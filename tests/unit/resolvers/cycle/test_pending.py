"""``pending`` (``resolvers.pending``) on a recording executor: a user's counts from their own
scope, a tenant's for its admins only, dead letters paged, requeues bounded."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest import paging
from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import Role, Scope, resolve_scope
from palimpsest.resolvers.cycle import pending
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

COUNTS = [
    {"status": "queued", "spans": 7, "leased": 2, "oldest": NOW - timedelta(seconds=90)},
    {"status": "done", "spans": 11, "leased": 0, "oldest": None},
    {"status": "dead", "spans": 1, "leased": 0, "oldest": None},
]


def counts(statement: Statement, params: dict[str, Any]) -> list[Row]:
    return COUNTS if statement.name.endswith("QUEUE_COUNTS") else []


def letters(n: int) -> list[Row]:
    return [
        {
            "id": f"{i:032x}",
            "source_id": None,
            "session_id": "s",
            "attempts": 5,
            "error": "ValueError",
            "dead_at": NOW - timedelta(minutes=i),
        }
        for i in range(n)
    ]


async def test_a_user_sees_their_own_counts_with_leased_spans_apart(tmp_path: Path) -> None:
    svc, recorder = services(counts, tmp_path)
    work = await pending.pending_work(svc, principal(), Scope.USER)
    assert (work.queued, work.leased, work.done, work.dead) == (5, 2, 11, 1)
    assert work.oldest_queued_seconds == 90.0
    (call,) = recorder.calls
    assert call.name == "QUEUE_COUNTS"
    assert call.params["scope_key"] == resolve_scope(principal(), Scope.USER).scope_key
    assert call.params["now"] == NOW


async def test_an_empty_queue_counts_zero_with_no_age(tmp_path: Path) -> None:
    svc, _ = services(lambda s, p: [], tmp_path)
    work = await pending.pending_work(svc, principal(), Scope.USER)
    assert (work.queued, work.leased, work.done, work.dead) == (0, 0, 0, 0)
    assert work.oldest_queued_seconds is None


async def test_the_tenant_counts_are_for_its_admins_only(tmp_path: Path) -> None:
    svc, recorder = services(counts, tmp_path)
    with pytest.raises(Forbidden):
        await pending.pending_work(svc, principal(), Scope.TENANT)
    assert recorder.calls == []
    admin = principal(roles=frozenset({Role.ADMIN}))
    work = await pending.pending_work(svc, admin, Scope.TENANT)
    assert work.queued == 5
    (call,) = recorder.calls
    assert call.name == "TENANT_QUEUE_COUNTS"
    assert call.params["tenant"] == "acme"  # the token's tenant, never an argument


@pytest.mark.parametrize("scope", [Scope.AGENT, Scope.GLOBAL])
async def test_spans_wait_in_user_scopes_only(tmp_path: Path, scope: Scope) -> None:
    svc, recorder = services(counts, tmp_path)
    with pytest.raises(InvalidArgument):
        await pending.pending_work(svc, principal(roles=frozenset({Role.ADMIN})), scope)
    assert recorder.calls == []


async def test_dead_letters_are_paged_by_death_time_then_id(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: letters(3), tmp_path)
    page = await pending.dead_letters(svc, principal(), 2, None)
    assert [d.span_id for d in page.items] == [f"{0:032x}", f"{1:032x}"]
    assert page.cursor is not None
    assert recorder.calls[0].params["limit"] == 3  # one more than asked: is there a next page
    await pending.dead_letters(svc, principal(), 2, page.cursor)
    assert recorder.calls[1].params["after_at"] == NOW - timedelta(minutes=1)
    assert recorder.calls[1].params["after_id"] == f"{1:032x}"


async def test_the_last_page_has_no_cursor(tmp_path: Path) -> None:
    svc, _ = services(lambda s, p: letters(2), tmp_path)
    page = await pending.dead_letters(svc, principal(), 2, None)
    assert len(page.items) == 2
    assert page.cursor is None


async def test_a_cursor_of_another_list_is_refused_before_any_read(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: letters(1), tmp_path)
    other = paging.encode("documents", [NOW.isoformat(), "x"])
    with pytest.raises(InvalidArgument):
        await pending.dead_letters(svc, principal(), 2, other)
    with pytest.raises(InvalidArgument):
        await pending.dead_letters(svc, principal(), pending.MAX_DEAD_LETTERS + 1, None)
    assert recorder.calls == []


@pytest.mark.parametrize("count", [0, pending.MAX_REQUEUE + 1])
async def test_a_requeue_outside_its_bounds_writes_nothing(tmp_path: Path, count: int) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    with pytest.raises(InvalidArgument):
        await pending.requeue(svc, principal(), [f"span-{i}" for i in range(count)])
    assert recorder.calls == []


async def test_a_requeue_writes_in_the_callers_scope(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [{"id": "span-1"}], tmp_path)
    assert await pending.requeue(svc, principal(), ["span-1", "span-9"]) == ["span-1"]
    (call,) = recorder.calls
    assert call.write
    assert call.name == "REQUEUE_DEAD"
    assert call.params["ids"] == ["span-1", "span-9"]
    assert call.params["scope_key"] == resolve_scope(principal(), Scope.USER).scope_key
