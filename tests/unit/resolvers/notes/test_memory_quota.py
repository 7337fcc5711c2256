"""Quota checks of the key/value plane, on a recording executor: a refused write runs no
upsert, the numbers in the refusal are the ones the database reported, and the scope's
bound on its stored bytes spares the sum over its notes when the write clearly fits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.cypher.quotas import COUNTERS
from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Scope
from palimpsest.resolvers.notes import keyvalue as memory
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

# A new note is written, its term statistics changed and the scope's counters raised
# (resolvers/tenant/quotas.py) in one statement, under the scope's lock.
WRITE = ["WRITE_MEMORY"]
# The one-statement set (``SET_MEMORY``) comes first; these scripts answer it as its checks
# fail (no row: a bound unknown or near the quota), so the resolver checks as below.
LOCK = ["SET_MEMORY", "LOCK_SCOPE_READ_ENTRY"]


def script(used: int, bound: int | None = None, stored: int = 0, others: int = 0) -> Any:
    """``used``: live bytes of the other notes; ``others``: stored bytes of the other notes
    (expired ones too); ``bound``: the scope's ``memory_bytes``; ``stored``: the key's own."""

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        match statement.name:
            case "SET_MEMORY":
                return []
            case "LOCK_SCOPE_READ_ENTRY":
                entry = {"value": None, "expires_at": None, "embed_mode": None, "text": None}
                versions = {"stored": False, "updated_at": None, "note_versions": None}
                return [
                    entry
                    | versions
                    | {
                        "memory_bytes": bound,
                        "stored_bytes": stored,
                        "last_version": [],
                        "pinned": False,
                    }
                ]
            case "SCOPE_USAGE":
                return [{"used": used, "others": others}]
            case "WRITE_MEMORY":
                return [
                    dict.fromkeys(COUNTERS, 0)
                    | {
                        "fits": True,
                        "key": params["key"],
                        "value": params["value"],
                        "expires_at": None,
                        "created_at": NOW,
                        "updated_at": NOW,
                        "embedded": False,
                        "embed_mode": None,
                        "tenant_id": params["tenant_id"],
                        "origin": params["origin"],
                        "observed_at": params["observed_at"],
                        "valid_at": params["valid_at"],
                        "invalid_at": params["invalid_at"],
                        "pinned": params["pinned"],
                    }
                ]
        raise AssertionError(statement.name)

    return answer


async def test_a_write_over_the_scope_quota_is_refused_before_the_upsert(tmp_path: Path) -> None:
    svc, recorder = services(script(used=95), tmp_path, max_scope_bytes=100)
    with pytest.raises(QuotaExceeded) as refused:
        await memory.set_value(svc, principal(), Scope.USER, "k", "0123456789", None, False, None)
    # key (1 byte) + JSON value (12 bytes) on top of the 95 the scope already holds.
    assert refused.value.details == {
        "quota": 100,
        "current": 95,
        "after": 108,
        "plane": "noteBytes",
        "limit": 100,
        "usage": 95,
        "setting": "PALIMPSEST_MAX_SCOPE_BYTES",
    }
    assert recorder.names() == [*LOCK, "SCOPE_USAGE"]


async def test_a_write_within_the_quota_is_upserted_under_the_lock(tmp_path: Path) -> None:
    svc, recorder = services(script(used=10, others=30), tmp_path, max_scope_bytes=100)
    entry = await memory.set_value(svc, principal(), Scope.USER, "k", "v", None, False, None)
    assert entry.value == "v"
    assert recorder.names() == [*LOCK, "SCOPE_USAGE", *WRITE]
    assert len({c.write for c in recorder.calls}) == 1  # one write transaction for all of them
    assert recorder.calls[3].params["bytes"] == len("k") + len('"v"')
    # The bound was unknown: it is set from the sum, expired notes included.
    assert recorder.calls[3].params["memory_bytes"] == 30 + 4
    # The new note's term "v" and the scope's row count change in the same transaction.
    changes = {(c["kind"], c["term"]): c["df"] for c in recorder.calls[3].params["changes"]}
    assert changes == {("memory", ""): 1, ("memory", "v"): 1}


async def test_a_write_well_under_the_bound_sums_nothing(tmp_path: Path) -> None:
    # 40 bytes stored in the scope, 12 of them this key's: the new 4 bytes clearly fit.
    svc, recorder = services(script(used=0, bound=40, stored=12), tmp_path, max_scope_bytes=100)
    await memory.set_value(svc, principal(), Scope.USER, "k", "v", None, False, None)
    assert recorder.names() == [*LOCK, *WRITE]
    assert recorder.calls[2].params["memory_bytes"] == 40 - 12 + 4


async def test_a_bound_over_the_quota_asks_the_live_notes(tmp_path: Path) -> None:
    # Expired notes fill the bound (98 stored), but only 10 bytes are live: accepted.
    script_ = script(used=10, bound=98, stored=0, others=98)
    svc, recorder = services(script_, tmp_path, max_scope_bytes=100)
    await memory.set_value(svc, principal(), Scope.USER, "k", "v", None, False, None)
    assert recorder.names()[:4] == [*LOCK, "SCOPE_USAGE", "WRITE_MEMORY"]
    assert recorder.calls[3].params["memory_bytes"] == 98 + 4


async def test_without_a_quota_an_unknown_bound_stays_unknown(tmp_path: Path) -> None:
    svc, recorder = services(script(used=0), tmp_path, max_scope_bytes=0)
    await memory.set_value(svc, principal(), Scope.USER, "k", "v", None, False, None)
    assert recorder.names() == [*LOCK, *WRITE]
    assert recorder.calls[2].params["memory_bytes"] is None
