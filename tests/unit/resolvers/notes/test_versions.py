"""Versions of notes on a recording executor: the version limit refuses before anything is
written and names its numbers; write times never fall at or before a key's last version."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Scope
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.notes import versions as note_versions
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def script(versions: int | None, counted: int = 0) -> Any:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        match statement.name:
            case "SET_MEMORY":  # its checks failed (the version limit): no row, no write
                return []
            case "LOCK_SCOPE_READ_ENTRY":
                return [
                    {
                        "value": '"old"',
                        "expires_at": None,
                        "embed_mode": None,
                        "text": "old",
                        "observed_at": None,
                        "valid_at": None,
                        "invalid_at": None,
                        "pinned": False,
                        "memory_bytes": 10,
                        "stored_bytes": 8,
                        "stored": True,
                        "updated_at": NOW - timedelta(hours=1),
                        "note_versions": versions,
                        "last_version": [],
                    }
                ]
            case "COUNT_VERSIONS":
                return [{"versions": counted}]
        raise AssertionError(statement.name)

    return answer


@pytest.mark.parametrize(("versions", "counted"), [(5, 0), (None, 5)])
async def test_a_write_over_the_version_limit_is_refused_before_any_write(
    tmp_path: Path, versions: int | None, counted: int
) -> None:
    svc, recorder = services(script(versions, counted), tmp_path, max_note_versions=5)
    with pytest.raises(QuotaExceeded) as refused:
        await memory.set_value(svc, principal(), Scope.USER, "k", "new", None, False, None)
    assert refused.value.details == {
        "limit": 5,
        "current": 5,
        "after": 6,
        "plane": "versions",
        "usage": 5,
        "setting": "PALIMPSEST_MAX_NOTE_VERSIONS",
    }
    assert "ARCHIVE_CURRENT" not in recorder.names()
    assert "WRITE_MEMORY" not in recorder.names()


async def test_a_delete_is_counted_but_never_refused_by_the_version_limit(
    tmp_path: Path,
) -> None:
    """Deleting is always possible: at the limit, the version and the tombstone a delete
    keeps are counted (the counter's raise carries no limit) and nothing refuses it."""
    base = script(5)

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        match statement.name:
            case "ARCHIVE_CURRENT" | "WRITE_TOMBSTONE" | "APPLY_TERM_STATS":
                return []
            case "RAISE_QUOTA_COUNTERS":
                return [{"fits": True}]
            case "DELETE_MEMORY":
                return [{"live": True, "ft": None, "ft_tf": None, "ft_len": None, "speaker": None}]
        rows: list[Row] = base(statement, params)
        return rows

    svc, recorder = services(answer, tmp_path, max_note_versions=5)
    assert await memory.delete(svc, principal(), Scope.USER, "k")
    archived = next(c for c in recorder.calls if c.name == "ARCHIVE_CURRENT")
    assert archived.params["note_versions"] == 7
    [raised] = [c for c in recorder.calls if c.name == "RAISE_QUOTA_COUNTERS"]
    assert raised.params["added"] == [{"counter": "quota_versions", "n": 2, "limit": 0}]
    assert "WRITE_TOMBSTONE" in recorder.names()


def test_a_write_is_stamped_after_the_keys_last_version() -> None:
    lock = {"updated_at": NOW, "last_version": []}
    assert note_versions.write_time(NOW, lock) == NOW + timedelta(microseconds=1)
    assert note_versions.write_time(NOW - timedelta(seconds=1), lock) > NOW
    later = NOW + timedelta(seconds=1)
    assert note_versions.write_time(later, lock) == later
    tomb = {"updated_at": None, "last_version": [[NOW, True]]}
    assert note_versions.write_time(NOW, tomb) == NOW + timedelta(microseconds=1)
    assert note_versions.write_time(later, {"updated_at": None, "last_version": []}) == later
