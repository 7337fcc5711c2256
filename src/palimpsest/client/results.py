"""Results of notes, documents, SQL Memory and harvest's queue, as the schema's
object types with snake_case fields (tests/unit/client/test_schema_sync.py keeps them equal)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Re-exported: the schema's note, admin and erasure types are looked up here like every other
# result (and imported from here, as before the notes' types had a module of their own).
from palimpsest.client.admin_results import EmbeddingModel as EmbeddingModel
from palimpsest.client.admin_results import EmbeddingPlane as EmbeddingPlane
from palimpsest.client.admin_results import EmbeddingStatus as EmbeddingStatus
from palimpsest.client.admin_results import PlaneUsage as PlaneUsage
from palimpsest.client.admin_results import Usage as Usage
from palimpsest.client.enums import ChunkType, Role, Scope
from palimpsest.client.erasure_results import AuthoredCounts as AuthoredCounts
from palimpsest.client.erasure_results import AuthoredErasure as AuthoredErasure
from palimpsest.client.erasure_results import ErasureCounts as ErasureCounts
from palimpsest.client.erasure_results import ErasurePolicy as ErasurePolicy
from palimpsest.client.erasure_results import ErasureReceipt as ErasureReceipt
from palimpsest.client.erasure_results import ErasureReceiptPage as ErasureReceiptPage
from palimpsest.client.erasure_results import RetentionPolicy as RetentionPolicy
from palimpsest.client.note_results import AppendResult as AppendResult
from palimpsest.client.note_results import BoundedListResult as BoundedListResult
from palimpsest.client.note_results import DeleteResult as DeleteResult
from palimpsest.client.note_results import MemoryEntry as MemoryEntry
from palimpsest.client.note_results import MemoryEntryPage as MemoryEntryPage
from palimpsest.client.note_results import MemoryVersion as MemoryVersion
from palimpsest.client.note_results import MemoryVersionPage as MemoryVersionPage
from palimpsest.client.note_results import Provenance as Provenance
from palimpsest.client.note_results import SourceQuote as SourceQuote
from palimpsest.client.note_results import StoreItem as StoreItem
from palimpsest.client.note_results import StoreNamespace as StoreNamespace


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
class MemoryFileAnswer:
    """What a memory file command answers: the text shown, and the file it touched."""

    text: str
    path: str | None
    document_id: str | None


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
