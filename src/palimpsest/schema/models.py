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
    text: str | None  # None: the span lives in another scope and its text stays there


@dataclass(frozen=True, slots=True)
class FactSource:
    """One span that attests a fact; a fact goes only when its last source goes."""

    chunk_id: str
    document_id: str | None
    start: int
    end: int
    text: str | None  # None: the span lives in another scope and its text stays there
    origin_scope: str | None
    added_at: datetime
    origin: str | None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Who wrote a row and from what (docs/spec.md, Provenance). ``origin`` is always
    server-stamped."""

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
    # The user who wrote the row (server-stamped; None when unknown, anonymised or hidden).
    writer: str | None = None


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
    observed_at: datetime | None = None  # when it was said or written
    valid_at: datetime | None = None  # world time, half-open like a fact's
    invalid_at: datetime | None = None
    pinned: bool = False  # a core note: ``context`` packs it first


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """One state a key held, in transaction time ``[created_at, expired_at)`` (null: still
    current); a tombstone (``deleted``) has no value."""

    key: str
    value: Any
    deleted: bool
    created_at: datetime
    expired_at: datetime | None
    expires_at: datetime | None
    valid_at: datetime | None
    invalid_at: datetime | None
    provenance: Provenance
    pinned: bool = False


@dataclass(frozen=True, slots=True)
class Span:
    """Where a chunk came from in the imported Markdown: 0-based lines (end exclusive) and
    character offsets into the original text."""

    start_line: int
    end_line: int
    start_char: int
    end_char: int


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str
    document_id: str
    type: str
    text: str
    parent_id: str | None
    position: int
    index: int
    level: int | None
    language: str | None
    revision: int
    span: Span
    observed_at: datetime | None
    created_at: datetime
    updated_at: datetime
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    id: str
    title: str | None
    path: str | None
    chunk_count: int
    created_at: datetime
    updated_at: datetime
    provenance: Provenance
    revision: int = 1  # the document revision this summary describes


@dataclass(frozen=True, slots=True)
class Document:
    summary: DocumentSummary
    preamble: str
    chunks: list[Chunk]
    separators: list[str]


@dataclass(frozen=True, slots=True)
class Entity:
    id: str
    type: str
    name: str
    aliases: tuple[str, ...] = ()
    provenance: Provenance | None = None


@dataclass(frozen=True, slots=True)
class Fact:
    """A bi-temporal fact; ``valid_at``/``invalid_at`` are world time, ``created_at``/
    ``expired_at`` the server's own record time."""

    scope: Scope
    id: str
    subject: Entity
    predicate: str
    object: Entity
    text: str
    natural_key: str
    observed_at: datetime | None
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    supersedes: str | None
    superseded_by: str | None
    confidence: float | None
    verdict: str | None
    judge_reason: str | None
    provenance: Provenance
    sources: tuple[FactSource, ...] = ()


@dataclass(frozen=True, slots=True)
class EntityDuplicate:
    """Two entities of one type that likely name one thing (``reason``, with ``figure``:
    1.0 for a folded name or alias they share, else the names' edit similarity)."""

    a: Entity
    b: Entity
    reason: str
    figure: float


@dataclass(frozen=True, slots=True)
class EntityMerge:
    """A recorded merge: ``merged_ids`` were folded into ``keep_id`` (undone at ``undone_at``)."""

    id: str
    keep_id: str
    merged_ids: tuple[str, ...]
    added_aliases: tuple[str, ...]
    facts_moved: int
    mentions_moved: int
    created_at: datetime
    undone_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class NamespacedNote:
    """A note under a namespaced key (``domain.notes.namespaces``), as a store search finds it;
    ``score`` is its cosine similarity to the query (None: no query, or no vector)."""

    namespace: tuple[str, ...]
    name: str
    entry: MemoryEntry
    score: float | None
