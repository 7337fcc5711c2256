"""A tenant's retention policy (``resolvers.retention``) on a recording executor: only a
non-isolated tenant admin sets it, bad windows change nothing, the tenant's windows override
the server's settings, and a ``knownAt`` before the swept horizon is refused."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import Role, Scope, resolve_scope
from palimpsest.resolvers.tenant import retention
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

ADMIN = principal(roles=frozenset({Role.ADMIN}))
WINDOWS = ("versions_seconds", "tombstones_seconds", "done_spans_seconds")


def stored(**row: Any) -> Any:
    full = {
        "versions_seconds": None,
        "tombstones_seconds": None,
        "done_spans_seconds": None,
        "history_swept_before": None,
        "document_history_swept_before": None,
        **row,
    }

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "SET_RETENTION":
            return [{**full, **{k: params[k] for k in WINDOWS}}]
        return [full]

    return answer


@pytest.mark.parametrize(
    "who",
    [principal(), replace(ADMIN, isolated=True), principal(roles=frozenset({Role.OPERATOR}))],
)
async def test_only_a_non_isolated_tenant_admin_sets_the_policy(tmp_path: Path, who: Any) -> None:
    svc, recorder = services(stored(), tmp_path)
    with pytest.raises(Forbidden, match="non-isolated"):
        await retention.set_retention_policy(svc, who, 60, None, None)
    assert recorder.calls == []


@pytest.mark.parametrize("window", [-1, retention.MAX_WINDOW_SECONDS + 1])
async def test_a_window_out_of_range_is_refused_naming_its_wire_name(
    tmp_path: Path, window: int
) -> None:
    svc, recorder = services(stored(), tmp_path)
    with pytest.raises(InvalidArgument, match=r"^doneSpansSeconds must be between 0"):
        await retention.set_retention_policy(svc, ADMIN, None, None, window)
    assert recorder.calls == []


async def test_the_tenants_windows_override_the_servers_settings(tmp_path: Path) -> None:
    svc, recorder = services(stored(), tmp_path, retention_tombstones_seconds=500)
    policy = await retention.set_retention_policy(svc, ADMIN, 60, None, 0)
    assert (policy.versions_seconds, policy.tombstones_seconds) == (60, 500)
    assert policy.done_spans_seconds == 0
    assert policy.overridden == ("versions_seconds", "done_spans_seconds")
    [call] = recorder.calls
    assert call.write
    assert call.params["tombstones_seconds"] is None
    assert policy.cutoff(policy.versions_seconds, NOW) == NOW - timedelta(seconds=60)
    assert policy.cutoff(policy.done_spans_seconds, NOW) is None  # 0: kept for ever


async def test_a_known_at_before_the_swept_horizon_is_refused(tmp_path: Path) -> None:
    svc, _ = services(stored(history_swept_before=NOW), tmp_path)
    db = svc.db.scoped(resolve_scope(principal(), Scope.USER))
    await retention.check_known_at(db, None)
    await retention.check_known_at(db, NOW)
    with pytest.raises(InvalidArgument, match="swept") as refused:
        await retention.check_known_at(db, NOW - timedelta(seconds=1))
    assert refused.value.details["historySwept"] is True


async def test_documents_are_checked_against_their_own_horizon(tmp_path: Path) -> None:
    svc, _ = services(stored(document_history_swept_before=NOW), tmp_path)
    db = svc.db.scoped(resolve_scope(principal(), Scope.USER))
    before = NOW - timedelta(seconds=1)
    await retention.check_known_at(db, before)  # notes only: their history is whole
    with pytest.raises(InvalidArgument, match="swept"):
        await retention.check_known_at(db, before, notes=False, documents=True)
