"""Results of key/value notes and the store over them: an entry, its versions, what a write
answers, and the provenance every row carries. A module of their own so a quick look at a note
builds these dataclasses only (``results`` re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.client.enums import Origin, Scope


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who wrote a row and from what. `origin` is stamped by the server. Across tenants (GLOBAL
    rows) the writer's session, run, agent and model are shown to platform operators only;
    everyone sees origin, compaction generation, source quote and judgement.
    """

    origin: Origin
    compaction_generation: int | None
    source_quote: SourceQuote | None
    judged_by: str | None
    judged_at: datetime | None
    tenant: str
    session: str | None
    run: str | None
    agent: str | None
    model: str | None
    writer: str | None = None


@dataclass(frozen=True, slots=True)
class SourceQuote:
    chunk_id: str
    start: int
    end: int
    text: str | None


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One key/value entry. Values are any JSON."""

    scope: Scope
    key: str
    value: Any
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    embedded: bool
    observed_at: datetime | None
    valid_at: datetime | None
    invalid_at: datetime | None
    provenance: Provenance
    pinned: bool


@dataclass(frozen=True, slots=True)
class MemoryEntryPage:
    """One page of a list, in the list's stable order."""

    items: list[MemoryEntry]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One version of a key, current in transaction time [createdAt, expiredAt)."""

    key: str
    value: Any
    deleted: bool
    created_at: datetime
    expired_at: datetime | None
    expires_at: datetime | None
    valid_at: datetime | None
    invalid_at: datetime | None
    provenance: Provenance
    pinned: bool


@dataclass(frozen=True, slots=True)
class MemoryVersionPage:
    """One page of a list, in the list's stable order."""

    items: list[MemoryVersion]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class AppendResult:
    appended: bool
    entry: MemoryEntry


@dataclass(frozen=True, slots=True)
class BoundedListResult:
    dropped: int
    entry: MemoryEntry


@dataclass(frozen=True, slots=True)
class DeleteResult:
    deleted: bool


@dataclass(frozen=True, slots=True)
class StoreItem:
    """A note under a namespaced key, as a store search finds it."""

    namespace: list[str]
    key: str
    score: float | None
    entry: MemoryEntry


@dataclass(frozen=True, slots=True)
class StoreNamespace:
    """One namespace: its labels, outermost first."""

    labels: list[str]
