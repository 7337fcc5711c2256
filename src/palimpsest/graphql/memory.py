"""GraphQL fields of the key/value plane. Resolvers only translate; logic is in resolvers/."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from palimpsest import paging
from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import EMBEDS, EmbedsWhen, costs
from palimpsest.graphql.scalars import Instant
from palimpsest.graphql.types import AfterArg, LimitArg, Page, Provenance, Scope, page_of
from palimpsest.resolvers import notes as ops
from palimpsest.schema import models

KeyArg = Annotated[str, strawberry.argument(description="The entry's key (1-512 bytes).")]
AsOfArg = Annotated[
    Instant | None,
    strawberry.argument(
        description="Read the notes valid at this time (default now): validAt null or <= "
        "asOf, and invalidAt null or after it."
    ),
]

KnownAtArg = Annotated[
    Instant | None,
    strawberry.argument(
        description="Read the notes as they were recorded at this transaction time: the "
        "version each key held then (default, or a time in the future: now)."
    ),
]


@strawberry.type(description="One key/value entry. Values are any JSON.")
class MemoryEntry:
    scope: Scope
    key: str
    value: JSON
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    embedded: bool = strawberry.field(description="True when the entry has a vector embedding.")
    observed_at: datetime | None = strawberry.field(description="When it was said or written.")
    valid_at: datetime | None = strawberry.field(
        description="When it became true in the world (null: always, as far as known)."
    )
    invalid_at: datetime | None = strawberry.field(
        description="When it stopped being true (exclusive; null: still true)."
    )
    provenance: Provenance
    pinned: bool = strawberry.field(
        default=False, description="A core note: `context` packs it first, before any fact."
    )

    @classmethod
    def of(cls, e: models.MemoryEntry) -> MemoryEntry:
        return cls(
            scope=e.scope,
            key=e.key,
            value=e.value,
            expires_at=e.expires_at,
            created_at=e.created_at,
            updated_at=e.updated_at,
            embedded=e.embedded,
            observed_at=e.observed_at,
            valid_at=e.valid_at,
            invalid_at=e.invalid_at,
            provenance=Provenance.of(e.provenance),
            pinned=e.pinned,
        )


@strawberry.type(
    description="One version of a key, current in transaction time [createdAt, expiredAt)."
)
class MemoryVersion:
    key: str
    value: JSON | None = strawberry.field(description="The value then; null for a tombstone.")
    deleted: bool = strawberry.field(description="True for a tombstone: the key was deleted.")
    created_at: datetime = strawberry.field(description="When this version was written.")
    expired_at: datetime | None = strawberry.field(
        description="When it stopped being current: the next write, or its expiry (null: "
        "it still is)."
    )
    expires_at: datetime | None = strawberry.field(description="Its TTL expiry, if it had one.")
    valid_at: datetime | None
    invalid_at: datetime | None
    provenance: Provenance
    pinned: bool = strawberry.field(default=False, description="Whether it was pinned then.")

    @classmethod
    def of(cls, v: models.MemoryVersion) -> MemoryVersion:
        return cls(
            key=v.key,
            value=v.value,
            deleted=v.deleted,
            created_at=v.created_at,
            expired_at=v.expired_at,
            expires_at=v.expires_at,
            valid_at=v.valid_at,
            invalid_at=v.invalid_at,
            provenance=Provenance.of(v.provenance),
            pinned=v.pinned,
        )


@strawberry.type
class DeleteResult:
    deleted: bool = strawberry.field(description="False when there was no live entry.")


@strawberry.type
class AppendResult:
    appended: bool = strawberry.field(description="False when an equal item was already there.")
    entry: MemoryEntry


@strawberry.type
class BoundedListResult:
    dropped: int = strawberry.field(description="How many of the oldest items were trimmed.")
    entry: MemoryEntry


@strawberry.type
class MemoryQuery:
    @strawberry.field(
        description="Read one entry; a missing or expired key, or a note not valid at "
        "`asOf`, reads as null."
    )
    async def memory(
        self,
        info: Info,
        scope: Scope,
        key: KeyArg,
        as_of: AsOfArg = None,
        known_at: KnownAtArg = None,
    ) -> MemoryEntry | None:
        c = info.context
        entry = await ops.get(c.services, c.principal, scope, key, as_of, known_at)
        return MemoryEntry.of(entry) if entry else None

    @strawberry.field(
        description="Live entries by key prefix, in key order, paged (limit at most 1000)."
    )
    async def memories(
        self,
        info: Info,
        scope: Scope,
        prefix: str = "",
        as_of: AsOfArg = None,
        known_at: KnownAtArg = None,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[MemoryEntry]:
        c = info.context
        found = await ops.list_entries(
            c.services, c.principal, scope, prefix, limit, after, as_of, known_at
        )
        return page_of(found, MemoryEntry.of)

    @strawberry.field(
        description="Every version of a key, newest first, paged (limit at most 1000): the "
        "current one, the values it replaced and the tombstones of its deletes. A key never "
        "written has none."
    )
    async def memory_history(
        self,
        info: Info,
        scope: Scope,
        key: KeyArg,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[MemoryVersion]:
        c = info.context
        found = await ops.history(c.services, c.principal, scope, key, limit, after)
        return page_of(found, MemoryVersion.of)


@strawberry.type
class MemoryMutation:
    @strawberry.mutation(
        description="Write a value, replacing any entry (its expiry and times too) under the "
        "key. `ttlSeconds` 0 or null means no expiry. `embed` stores a vector of `embedText`, "
        "or of the value itself. `observedAt`, `validAt`, `invalidAt` date the note like a fact. "
        "`pinned` makes it a core note that `context` packs first; omitted, the key keeps its "
        "current pin (a new key is unpinned), false unpins.",
        metadata=costs(EmbedsWhen("embed")),
    )
    async def memory_set(
        self,
        info: Info,
        scope: Scope,
        key: KeyArg,
        value: JSON,
        ttl_seconds: int | None = None,
        embed: bool = False,
        embed_text: str | None = None,
        observed_at: Instant | None = None,
        valid_at: Instant | None = None,
        invalid_at: Instant | None = None,
        pinned: bool | None = None,
    ) -> MemoryEntry:
        c = info.context
        entry = await ops.set_value(
            c.services,
            c.principal,
            scope,
            key,
            value,
            ttl_seconds,
            embed,
            embed_text,
            observed_at,
            valid_at,
            invalid_at,
            pinned,
        )
        return MemoryEntry.of(entry)

    @strawberry.mutation(description="Delete an entry.")
    async def memory_delete(self, info: Info, scope: Scope, key: KeyArg) -> DeleteResult:
        c = info.context
        return DeleteResult(deleted=await ops.delete(c.services, c.principal, scope, key))

    @strawberry.mutation(
        description="Add `delta` to a number (a missing key counts as 0).", metadata=costs(EMBEDS)
    )
    async def memory_increment(
        self,
        info: Info,
        scope: Scope,
        key: KeyArg,
        delta: float = 1,
    ) -> MemoryEntry:
        c = info.context
        return MemoryEntry.of(await ops.increment(c.services, c.principal, scope, key, delta))

    @strawberry.mutation(
        description="Deep-merge a JSON object into the stored object; arrays and scalars replace.",
        metadata=costs(EMBEDS),
    )
    async def memory_merge(
        self,
        info: Info,
        scope: Scope,
        key: KeyArg,
        value: JSON,
    ) -> MemoryEntry:
        c = info.context
        return MemoryEntry.of(await ops.merge(c.services, c.principal, scope, key, value))

    @strawberry.mutation(
        description="Append to a JSON array unless an equal item is present.",
        metadata=costs(EMBEDS),
    )
    async def memory_append_dedupe(
        self,
        info: Info,
        scope: Scope,
        key: KeyArg,
        value: JSON,
    ) -> AppendResult:
        c = info.context
        entry, appended = await ops.append_dedupe(c.services, c.principal, scope, key, value)
        return AppendResult(appended=appended, entry=MemoryEntry.of(entry))

    @strawberry.mutation(
        description="Append to a JSON array, keeping only the newest `limit`.",
        metadata=costs(EMBEDS),
    )
    async def memory_bounded_list(
        self,
        info: Info,
        scope: Scope,
        key: KeyArg,
        value: JSON,
        limit: int,
    ) -> BoundedListResult:
        c = info.context
        entry, dropped = await ops.bounded_list(c.services, c.principal, scope, key, value, limit)
        return BoundedListResult(dropped=dropped, entry=MemoryEntry.of(entry))
