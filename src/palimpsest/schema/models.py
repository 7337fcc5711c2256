"""Domain models the resolvers return and the GraphQL layer renders."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.identity import Scope


@dataclass(frozen=True, slots=True)
class SourceQuote:
    chunk_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who wrote a row and from what (SPEC section 6). ``origin`` is always server-stamped."""

    tenant_id: str
    session_id: str | None
    run_id: str | None
    agent_name: str | None
    model: str | None
    origin: str
    compaction_generation: int | None = None
    source_quote: SourceQuote | None = None
    judged_by: str | None = None
    judged_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    scope: Scope
    key: str
    value: Any
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    embedded: bool
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class MemoryPage:
    entries: list[MemoryEntry]
    next_after: str | None
