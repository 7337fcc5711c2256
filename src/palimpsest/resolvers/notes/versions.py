"""Versions of key/value notes (docs/decisions/0007-note-versions.md): every write keeps the
state it replaces, a delete writes a tombstone, and the past reads by transaction time.

The write side runs inside a writer's transaction, under the scope's lock that
``memory._lock`` takes, so the writers of one key form one linear history.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from palimpsest import paging
from palimpsest.config import Settings
from palimpsest.cypher import note_versions as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.notes import values
from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.common import new_id, provenance_from, writer_params
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas
from palimpsest.schema.models import MemoryVersion

HISTORY_NAME = "memoryHistory"
MAX_HISTORY_LIMIT = 1000
_TICK = timedelta(microseconds=1)


def write_time(clock: datetime, lock: Row) -> datetime:
    """The time a write under the lock stamps: the clock, but never at or before the key's
    last version (two writes in one clock tick, or a clock stepped back), so a key's
    versions are strictly ordered."""
    last = [t for t in (lock["updated_at"], *_last(lock)[:1]) if t is not None]
    newest = max(last, default=None)
    return clock if newest is None or clock > newest else newest + _TICK


async def keep_past(
    tx: ScopedTx,
    settings: Settings,
    who: Principal,
    key: str,
    now: datetime,
    lock: Row,
    *,
    tombstone: bool = False,
) -> None:
    """Before a write (or, with ``tombstone``, a delete) of ``key``: the stored state becomes
    a past version, an open tombstone ends, and a delete writes its tombstone. Refuses, before
    anything changes, a write that would take the scope over its version limit. A delete is
    never refused: what it keeps (the state it ends and its tombstone) is counted, and may
    take the scope past the limit, so that a person can always delete what they wrote."""
    stored = bool(lock["stored"])
    added = int(stored) + int(tombstone and stored)
    if not stored and _last(lock)[1:] == [True]:
        await tx.run(q.CLOSE_TOMBSTONE, {"key": key, "now": now})
    if not added:
        return
    limit = 0 if tombstone else settings.limits.max_note_versions
    count = await _versions(tx, limit, lock["note_versions"], added)
    params = {"key": key, "now": now, "note_versions": count + added, "id": new_id()}
    await tx.run(q.ARCHIVE_CURRENT, params)
    if tombstone:
        await tx.run(q.WRITE_TOMBSTONE, {**params, **writer_params(who), "tombstone_id": new_id()})
    # The versions plane counts documents' past too (resolvers/tenant/quotas.py).
    exempt = frozenset({quotas.Plane.VERSIONS}) if tombstone else frozenset()
    await quotas.admit(tx, settings, {quotas.Plane.VERSIONS: added}, exempt=exempt)


async def past_params(
    tx: ScopedTx, settings: Settings, key: str, now: datetime, lock: Row
) -> tuple[dict[str, object], int]:
    """What ``keep_past`` does before a write, as the parameters of a statement that does it
    itself (cypher/memory.py ``WRITE_MEMORY``), and the versions it adds. Refuses, before
    anything changes, a write that would take the scope over its version limit."""
    stored = bool(lock["stored"])
    count = (
        await _versions(tx, settings.limits.max_note_versions, lock["note_versions"], 1)
        if stored
        else 0
    )
    params = {
        "key": key,
        "now": now,
        "close_tombstone": not stored and _last(lock)[1:] == [True],
        "archive": stored,
        "note_versions": count + 1 if stored else None,
        "id": new_id(),
    }
    return params, int(stored)


async def _versions(tx: ScopedTx, limit: int, counted: int | None, added: int) -> int:
    """The scope's past versions now (its counter, or a count when that is unknown)."""
    if counted is None:
        [row] = await tx.run(q.COUNT_VERSIONS, {})
        counted = int(row["versions"])
    count = int(counted)
    if limit and count + added > limit:
        raise QuotaExceeded(
            f"scope {tx.ref.scope.value} keeps at most {limit} past note versions "
            f"(current={count}, after={count + added}); erase or export and re-import to "
            "drop history",
            limit=limit,
            current=count,
            after=count + added,
            plane="versions",
            usage=count,
            setting="PALIMPSEST_MAX_NOTE_VERSIONS",
        )
    return count


def _last(lock: Row) -> list[object]:
    found = lock["last_version"] or []
    return list(found[0]) if found else []


def known_params(known_at: datetime | None, now: datetime) -> datetime | None:
    """A ``knownAt`` to read the past at, or None for the present (a future one reads now)."""
    return known_at if known_at is not None and known_at < now else None


async def history(
    svc: Services, who: Principal, scope: Scope, key: str, limit: int, after: str | None
) -> paging.Page[MemoryVersion]:
    """The key's versions, newest first; a key never written (or another scope's) has none."""
    ref = resolve_scope(who, scope)
    paging.check_limit(limit, MAX_HISTORY_LIMIT)
    position = paging.decode(after, HISTORY_NAME, (paging.Part.TIME,))
    params = {
        "key": values.check_key(key),
        "now": svc.clock(),
        "after": position[0] if position else None,
        "limit": limit + 1,
    }
    rows = await svc.db.scoped(ref).read(q.MEMORY_HISTORY, params)
    found = [_version(key, row, who) for row in rows]
    return paging.page(found, limit, HISTORY_NAME, lambda v: [v.created_at])


def _version(key: str, row: Row, reader: Principal) -> MemoryVersion:
    deleted = bool(row["deleted"])
    return MemoryVersion(
        key=key,
        value=None if deleted or row["value"] is None else values.decode(row["value"]),
        deleted=deleted,
        created_at=row["created_at"],
        expired_at=row["expired_at"],
        expires_at=row["expires_at"],
        valid_at=row["valid_at"],
        invalid_at=row["invalid_at"],
        provenance=provenance_from(row, reader),
        pinned=bool(row["pinned"]) and not deleted,
    )
