"""Results of notes, documents, SQL Memory and harvest's queue, as the schema's
object types with snake_case fields (tests/unit/client/test_schema_sync.py keeps them equal)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Re-exported: the schema's admin and erasure types are looked up here like every other result.
from palimpsest.client.admin_results import EmbeddingModel as EmbeddingModel
from palimpsest.client.admin_results import EmbeddingPlane as EmbeddingPlane
from palimpsest.client.admin_results import EmbeddingStatus as EmbeddingStatus
from palimpsest.client.admin_results import PlaneUsage as PlaneUsage
from palimpsest.client.admin_results import Usage as Usage
from palimpsest.client.enums import ChunkType, Origin, Role, Scope
from palimpsest.client.erasure_results import AuthoredCounts as AuthoredCounts
from palimpsest.client.erasure_results import AuthoredErasure as AuthoredErasure
from palimpsest.client.erasure_results import ErasureCounts as ErasureCounts
from palimpsest.client.erasure_results import ErasurePolicy as ErasurePolicy
from palimpsest.client.erasure_results import ErasureReceipt as ErasureReceipt
from palimpsest.client.erasure_results import ErasureReceiptPage as ErasureReceiptPage
from palimpsest.client.erasure_results import RetentionPolicy as RetentionPolicy


@dataclass(frozen=True, slots=True)
class AppendResult:
    appended: bool
    entry: MemoryEntry


@dataclass(frozen=True, slots=True)
class BoundedListResult:
    dropped: int
    entry: MemoryEntry


@dataclass(frozen=True, slots=True)
class Chunk:
    """A typed piece of a document."""

    id: str
    document_id: str
    type: ChunkType
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
class ChunkRef:
    id: str
    document_id: str
    type: ChunkType
    text: str
    provenance: Provenance | None


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A span the consolidator gave up on, with the error that stopped it."""

    span_id: str
    source_id: str | None
    session: str | None
    attempts: int
    error: str | None
    dead_at: datetime | None


@dataclass(frozen=True, slots=True)
class DeadLetterPage:
    """One page of a list, in the list's stable order."""

    items: list[DeadLetter]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class DeleteResult:
    deleted: bool


@dataclass(frozen=True, slots=True)
class DeletedDocument:
    chunks_deleted: int
    fact_sources_removed: int
    facts_removed: int


@dataclass(frozen=True, slots=True)
class Document:
    """A document with its chunk tree (flat, in reading order)."""

    summary: DocumentSummary
    chunks: list[Chunk]
    markdown: str


@dataclass(frozen=True, slots=True)
class DocumentRevision:
    """One revision of a document: every change writes one."""

    revision: int
    created_at: datetime
    deleted: bool
    changed_chunks: int | None
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class DocumentRevisionPage:
    """One page of a list, in the list's stable order."""

    items: list[DocumentRevision]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    id: str
    title: str | None
    path: str | None
    chunk_count: int
    created_at: datetime
    updated_at: datetime
    provenance: Provenance
    revision: int


@dataclass(frozen=True, slots=True)
class DocumentSummaryPage:
    """One page of a list, in the list's stable order."""

    items: list[DocumentSummary]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class Me:
    """The caller, as the verified run token names it."""

    tenant: str
    user: str | None
    agent: str | None
    session: str | None
    run: str | None
    model: str | None
    roles: list[Role]
    isolated: bool
    memory_scopes: list[Scope]
    sql_scopes: list[Scope]


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
class MemoryFileAnswer:
    """What a memory file command answers: the text shown, and the file it touched."""

    text: str
    path: str | None
    document_id: str | None


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
class PendingWork:
    """Spans on the consolidator's queue, by state."""

    scope: Scope
    queued: int
    leased: int
    done: int
    dead: int
    oldest_queued_seconds: float | None
    consolidators: int  # consolidator workers running in the server that answered


@dataclass(frozen=True, slots=True)
class PersonalExport:
    """Everything you own, as JSON Lines (see the README for the format)."""

    format: str
    version: int
    lines: list[str]
    bytes: int


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
class Span:
    """Where a chunk sits in the imported Markdown (0-based lines, end exclusive; character offsets
    into the original text).
    """

    start_line: int
    end_line: int
    start_char: int
    end_char: int


@dataclass(frozen=True, slots=True)
class SqlDatabase:
    """One scope's SQL database, as an admin sees it."""

    id: str
    scope: Scope | None
    tenant: str | None
    owner: str | None
    bytes: int
    modified_at: datetime


@dataclass(frozen=True, slots=True)
class SqlDatabasePage:
    """One page of a list, in the list's stable order."""

    items: list[SqlDatabase]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class SqlEraseResult:
    erased: bool
    bytes: int


@dataclass(frozen=True, slots=True)
class SqlExecResult:
    """The batch committed; one result per statement, in order."""

    results: list[SqlStatementResult]


@dataclass(frozen=True, slots=True)
class SqlQueryResult:
    """Rows of one read-only query."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    truncated_by: str | None


@dataclass(frozen=True, slots=True)
class SqlStatementResult:
    rows_affected: int
    last_insert_id: int | None
