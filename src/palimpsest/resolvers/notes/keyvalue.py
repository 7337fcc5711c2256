"""The key/value plane (docs/spec.md, Planes): get, set, delete, list, and atomic reducers.

Every operation resolves its scope first; writes run in one transaction that locks the
scope, so the quota check and the write cannot interleave with another writer. A refused
write raises before commit and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from palimpsest import paging
from palimpsest.cypher import memory as q
from palimpsest.cypher import note_versions as vq
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.notes import values
from palimpsest.domain.ranking.fulltext import SPEAKER_KIND, TOTALS
from palimpsest.domain.time.timeparse import check_interval
from palimpsest.errors import InvalidArgument, QuotaExceeded
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import new_id, provenance_from, writer_params
from palimpsest.resolvers.notes import versions as note_versions
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas, retention
from palimpsest.schema.models import MemoryEntry

R = TypeVar("R")
MAX_LIST_LIMIT = 1000
LIST_NAME = "memories"
MAX_TTL_SECONDS = 10 * 365 * 24 * 3600
MAX_EMBED_TEXT_CHARS = values.MAX_EMBED_TEXT_CHARS
_EMBED_VALUE = "value"
_EMBED_TEXT = "text"


@dataclass(frozen=True, slots=True)
class NoteTimes:
    """When a note was said (``observed_at``) and when it holds in the world (half-open)."""

    observed_at: datetime | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None

    def __post_init__(self) -> None:
        check_interval(self.valid_at, self.invalid_at)

    def params(self) -> dict[str, datetime | None]:
        return {
            "observed_at": self.observed_at,
            "valid_at": self.valid_at,
            "invalid_at": self.invalid_at,
        }


@dataclass(frozen=True, slots=True)
class _Embedding:
    mode: str | None
    text: str | None
    vector: list[float] | None


async def get(
    svc: Services,
    who: Principal,
    scope: Scope,
    key: str,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> MemoryEntry | None:
    """The entry under ``key`` if it is live and valid at ``as_of`` (default now), as the
    key stood at transaction time ``known_at`` (default, or in the future: now)."""
    ref = resolve_scope(who, scope)
    now = svc.clock()
    params = {"key": values.check_key(key), "now": now, "as_of": _as_of(as_of, now)}
    known = note_versions.known_params(known_at, now)
    await retention.check_known_at(svc.db.scoped(ref), known)
    statement = q.GET_MEMORY if known is None else vq.GET_MEMORY_KNOWN
    rows = await svc.db.scoped(ref).read(statement, {**params, "known_at": known})
    return _entry(ref, rows[0], who) if rows else None


async def list_entries(
    svc: Services,
    who: Principal,
    scope: Scope,
    prefix: str,
    limit: int,
    after: str | None,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> paging.Page[MemoryEntry]:
    ref = resolve_scope(who, scope)
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, LIST_NAME, (paging.Part.TEXT,))
    now = svc.clock()
    params = {
        "prefix": prefix,
        "after": position[0] if position else "",  # keys are never empty
        "limit": limit + 1,
        "now": now,
        "as_of": _as_of(as_of, now),
    }
    known = note_versions.known_params(known_at, now)
    await retention.check_known_at(svc.db.scoped(ref), known)
    statement = q.LIST_MEMORY if known is None else vq.LIST_MEMORY_KNOWN
    rows = await svc.db.scoped(ref).read(statement, {**params, "known_at": known})
    entries = [_entry(ref, row, who) for row in rows]
    return paging.page(entries, limit, LIST_NAME, lambda e: [e.key])


async def set_value(
    svc: Services,
    who: Principal,
    scope: Scope,
    key: str,
    value: Any,
    ttl_seconds: int | None,
    embed: bool,
    embed_text: str | None,
    observed_at: datetime | None = None,
    valid_at: datetime | None = None,
    invalid_at: datetime | None = None,
    pinned: bool | None = None,
) -> MemoryEntry:
    """Write ``value`` under ``key``. ``pinned`` marks a core note (``context`` packs it
    first): None keeps the key's current pin (an absent or expired key is unpinned), False
    unpins."""
    ref = resolve_scope(who, scope)
    key = values.check_key(key)
    times = NoteTimes(observed_at, valid_at, invalid_at)
    text = values.encode(value)
    _check_value_size(svc, key, text)
    if ttl_seconds is not None and not 0 <= ttl_seconds <= MAX_TTL_SECONDS:
        raise InvalidArgument(f"ttlSeconds must be between 0 and {MAX_TTL_SECONDS}")
    if embed_text is not None and not embed:
        raise InvalidArgument("embedText is only used with embed: true")
    if embed_text is not None and not embed_text.strip():
        raise InvalidArgument("embedText must not be blank")
    if embed_text is not None and len(embed_text) > MAX_EMBED_TEXT_CHARS:
        raise InvalidArgument(
            f"embedText is {len(embed_text)} characters; the limit is {MAX_EMBED_TEXT_CHARS}",
            limit=MAX_EMBED_TEXT_CHARS,
        )
    embedding = await _embed(svc, embed, embed_text, value, text)

    async def work(tx: ScopedTx) -> MemoryEntry:
        clock = svc.clock()
        expires = clock + timedelta(seconds=ttl_seconds) if ttl_seconds else None
        params = _note_params(svc, who, key, text, expires, embedding, clock, times)
        if done := await tx.run(q.SET_MEMORY, {**params, **_set_params(svc, pinned)}):
            return _entry(tx.ref, done[0], who)
        # A check the statement leaves to the resolver (a scope's first note or version, a
        # write near a quota, a clock not after the key's last version): the two statements,
        # under the lock the first one took.
        _, stored, now = await _lock(tx, key, clock)
        expires = now + timedelta(seconds=ttl_seconds) if ttl_seconds else None
        pin = bool(stored["pinned"]) if pinned is None else pinned
        return await _write(tx, svc, who, key, text, expires, embedding, now, stored, times, pin)

    return await svc.db.scoped(ref).write_tx(work)


async def delete(svc: Services, who: Principal, scope: Scope, key: str) -> bool:
    """Delete the key's current version, keeping it as a past one, and write a tombstone."""
    ref = resolve_scope(who, scope)
    key = values.check_key(key)

    async def work(tx: ScopedTx) -> list[Row]:
        _, stored, now = await _lock(tx, key, svc.clock())
        if not stored["stored"]:
            return []
        await note_versions.keep_past(tx, svc.settings, who, key, now, stored, tombstone=True)
        rows = await tx.run(q.DELETE_MEMORY, {"key": key, "now": now})
        if rows:
            await term_index.apply(tx, svc.settings, "memory", term_index.replaced(rows[0], None))
        return rows

    rows = await svc.db.scoped(ref).write_tx(work)
    return bool(rows and rows[0]["live"])


async def increment(
    svc: Services, who: Principal, scope: Scope, key: str, delta: float
) -> MemoryEntry:
    entry, _ = await _reduce(svc, who, scope, key, lambda cur: (values.increment(cur, delta), None))
    return entry


async def merge(svc: Services, who: Principal, scope: Scope, key: str, patch: Any) -> MemoryEntry:
    values.encode(patch)
    entry, _ = await _reduce(
        svc, who, scope, key, lambda cur: (values.deep_merge(cur, patch), None)
    )
    return entry


async def append_dedupe(
    svc: Services, who: Principal, scope: Scope, key: str, item: Any
) -> tuple[MemoryEntry, bool]:
    values.encode(item)

    def step(cur: Any) -> tuple[Any, bool]:
        appended, items = values.append_dedupe(cur, item)
        return items, appended

    return await _reduce(svc, who, scope, key, step)


async def bounded_list(
    svc: Services, who: Principal, scope: Scope, key: str, item: Any, limit: int
) -> tuple[MemoryEntry, int]:
    values.encode(item)
    values.bounded_append([], item, limit)  # validates the limit before any write

    def step(cur: Any) -> tuple[Any, int]:
        dropped, items = values.bounded_append(cur, item, limit)
        return items, dropped

    return await _reduce(svc, who, scope, key, step)


async def _reduce(
    svc: Services,
    who: Principal,
    scope: Scope,
    key: str,
    step: Callable[[Any], tuple[Any, R]],
) -> tuple[MemoryEntry, R]:
    """Read, transform and write one value atomically; expiry, embedding mode and times stay."""
    ref = resolve_scope(who, scope)
    key = values.check_key(key)

    async def work(tx: ScopedTx) -> tuple[MemoryEntry, R]:
        current, stored, now = await _lock(tx, key, svc.clock())
        old = values.decode(current["value"]) if current else None
        new, extra = step(old)
        text = values.encode(new)
        _check_value_size(svc, key, text)
        mode = current["embed_mode"] if current else None
        kept_text = current["text"] if mode == _EMBED_TEXT and current else None
        embedding = await _embed(svc, mode is not None, kept_text, new, text)
        expires = current["expires_at"] if current else None
        kept = (
            NoteTimes(current["observed_at"], current["valid_at"], current["invalid_at"])
            if current
            else NoteTimes()
        )
        pin = bool(stored["pinned"])
        entry = await _write(tx, svc, who, key, text, expires, embedding, now, stored, kept, pin)
        return entry, extra

    return await svc.db.scoped(ref).write_tx(work)


async def _lock(tx: ScopedTx, key: str, clock: datetime) -> tuple[Row | None, Row, datetime]:
    """The live entry (None if absent or expired), what the stored row (expired or not)
    holds in the term statistics and its versions, and the time the write stamps (after the
    key's last version: ``note_versions.write_time``)."""
    [row] = await tx.run(q.LOCK_SCOPE_READ_ENTRY, {"key": key, "now": clock})
    now = note_versions.write_time(clock, row)
    return (row if row["value"] is not None else None), row, now


def _note_params(
    svc: Services,
    who: Principal,
    key: str,
    text: str,
    expires: datetime | None,
    embedding: _Embedding,
    now: datetime,
    times: NoteTimes,
) -> dict[str, Any]:
    """The note's own parameters, as ``WRITE_MEMORY`` and ``SET_MEMORY`` write them."""
    return {
        **term_index.row_fields(embedding.text or ""),
        "key": key,
        "value": text,
        "bytes": _size(key, text, embedding),
        "expires_at": expires,
        "now": now,
        "text": embedding.text,
        "embedding": embedding.vector,
        "embedding_dual": None,  # the other slot's, during a migration (cypher/slots.py)
        "embed_mode": embedding.mode,
        **writer_params(who),
        **times.params(),
        "compaction_generation": None,
    }


def _set_params(svc: Services, pinned: bool | None) -> dict[str, Any]:
    """What ``SET_MEMORY`` checks and computes itself: the pin to keep or set, the limits and
    counters, the version's id and the statistics' shard and names."""
    settings = svc.settings
    return {
        "pin": pinned,
        "quota": settings.limits.max_scope_bytes,
        "max_versions": settings.limits.max_note_versions,
        "notes_counter": quotas.PLANES[quotas.Plane.NOTES].counter,
        "notes_limit": quotas.limit_of(settings, quotas.Plane.NOTES),
        "versions_counter": quotas.PLANES[quotas.Plane.VERSIONS].counter,
        "versions_limit": quotas.limit_of(settings, quotas.Plane.VERSIONS),
        "id": new_id(),
        "kind": "memory",
        "totals": TOTALS,
        "speaker_kind": SPEAKER_KIND,
        "blank": " ",  # between a representation's terms (``fulltext.Stored``)
        "shard": term_index.shard(settings),
    }


def _size(key: str, text: str, embedding: _Embedding) -> int:
    # A separate embedText is stored (and indexed) too, so it counts against the quota.
    extra = embedding.text if embedding.mode == _EMBED_TEXT and embedding.text else ""
    return len(key.encode()) + len(text.encode()) + len(extra.encode())


async def _write(
    tx: ScopedTx,
    svc: Services,
    who: Principal,
    key: str,
    text: str,
    expires: datetime | None,
    embedding: _Embedding,
    now: datetime,
    stored: Row,
    times: NoteTimes,
    pinned: bool,
) -> MemoryEntry:
    params = _note_params(svc, who, key, text, expires, embedding, now, times)
    size = params["bytes"]
    memory_bytes = await _check_quota(
        tx, svc.settings.limits.max_scope_bytes, key, size, now, stored
    )
    params["memory_bytes"] = memory_bytes
    params["pinned"] = True if pinned else None  # absent when unpinned, as on older notes
    delta = term_index.replaced(stored, params)
    notes = {quotas.Plane.NOTES: 0 if stored["stored"] else 1}
    # Versions, the note, its term statistics and the quota counters in one round trip.
    past, versions = await note_versions.past_params(tx, svc.settings, key, now, stored)
    created = {**notes, quotas.Plane.VERSIONS: versions}
    changes = term_index.change_params(svc.settings, "memory", delta)
    [row] = await tx.run(
        q.WRITE_MEMORY,
        {
            **params,
            **past,
            **changes,
            "pruned": term_index.lowered(changes["changes"]),
            "added": quotas.raises(svc.settings, created),
        },
    )
    await quotas.settle(tx, svc.settings, created, row)
    return _entry(tx.ref, row, who)


async def _check_quota(
    tx: ScopedTx, quota: int, key: str, size: int, now: datetime, stored: Row
) -> int | None:
    """Refuse a write that would take the scope's live notes over ``quota`` bytes. Returns
    the scope's ``memory_bytes`` after the write (every stored note: an upper bound of the
    live ones; None: unknown). Under the bound nothing is summed; near the quota, or when
    the bound is unknown, the live notes are."""
    bound = stored["memory_bytes"]
    others = None if bound is None else int(bound) - int(stored["stored_bytes"])
    if quota and (others is None or others + size > quota):
        [usage] = await tx.run(q.SCOPE_USAGE, {"key": key, "now": now})
        used, others = int(usage["used"]), int(usage["others"])
        if used + size > quota:
            raise QuotaExceeded(
                f"scope {tx.ref.scope.value} quota of {quota} bytes would be exceeded "
                f"(current={used}, after={used + size})",
                quota=quota,
                current=used,
                after=used + size,
                plane="noteBytes",
                limit=quota,
                usage=used,
                setting="PALIMPSEST_MAX_SCOPE_BYTES",
            )
    return None if others is None else others + size  # unknown stays so while no quota asks


async def _embed(
    svc: Services, embed: bool, embed_text: str | None, value: Any, encoded: str
) -> _Embedding:
    # The searchable text is kept even without a vector, so full-text recall finds every note.
    text = embed_text if embed_text is not None else (value if isinstance(value, str) else encoded)
    if not embed:
        return _Embedding(None, text, None)
    [vector] = await svc.embed([text])
    return _Embedding(_EMBED_TEXT if embed_text is not None else _EMBED_VALUE, text, vector)


def _check_value_size(svc: Services, key: str, text: str) -> None:
    limit = svc.settings.limits.max_value_bytes
    size = len(text.encode())
    if limit and size > limit:
        raise QuotaExceeded(
            f"value is {size} bytes; the per-value limit is {limit} bytes", limit=limit, size=size
        )


def _entry(ref: ScopeRef, row: Row, reader: Principal) -> MemoryEntry:
    return MemoryEntry(
        scope=ref.scope,
        key=row["key"],
        value=values.decode(row["value"]),
        expires_at=row["expires_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        embedded=bool(row["embedded"]),
        provenance=provenance_from(row, reader),
        observed_at=row["observed_at"],
        valid_at=row["valid_at"],
        invalid_at=row["invalid_at"],
        pinned=bool(row["pinned"]),
    )


def _as_of(as_of: datetime | None, now: datetime) -> datetime:
    return as_of or now
