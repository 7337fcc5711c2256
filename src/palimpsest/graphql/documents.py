"""GraphQL fields of the documents plane."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry import ID

from palimpsest import paging
from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import EMBEDS, costs
from palimpsest.graphql.scalars import Instant
from palimpsest.graphql.types import (
    AfterArg,
    ChunkType,
    LimitArg,
    Page,
    Provenance,
    Scope,
    page_of,
)
from palimpsest.resolvers import documents as ops
from palimpsest.schema import models


@strawberry.type(
    description="Where a chunk sits in the imported Markdown (0-based lines, end "
    "exclusive; character offsets into the original text)."
)
class Span:
    start_line: int
    end_line: int
    start_char: int
    end_char: int


@strawberry.type(description="A typed piece of a document.")
class Chunk:
    id: ID
    document_id: ID
    type: ChunkType
    text: str
    parent_id: ID | None = strawberry.field(
        description="The enclosing chunk; null for top-level chunks (children of the document)."
    )
    position: int = strawberry.field(description="Order among the parent's children.")
    index: int = strawberry.field(description="Order in the whole document.")
    level: int | None
    language: str | None
    revision: int = strawberry.field(description="Pass to updateChunk; bumps on every edit.")
    span: Span
    observed_at: datetime | None
    created_at: datetime
    updated_at: datetime
    provenance: Provenance

    @classmethod
    def of(cls, c: models.Chunk) -> Chunk:
        return cls(
            id=ID(c.id),
            document_id=ID(c.document_id),
            type=ChunkType(c.type),
            text=c.text,
            parent_id=ID(c.parent_id) if c.parent_id else None,
            position=c.position,
            index=c.index,
            level=c.level,
            language=c.language,
            revision=c.revision,
            span=Span(
                start_line=c.span.start_line,
                end_line=c.span.end_line,
                start_char=c.span.start_char,
                end_char=c.span.end_char,
            ),
            observed_at=c.observed_at,
            created_at=c.created_at,
            updated_at=c.updated_at,
            provenance=Provenance.of(c.provenance),
        )


@strawberry.type
class DocumentSummary:
    id: ID
    title: str | None
    path: str | None
    chunk_count: int
    created_at: datetime
    updated_at: datetime
    provenance: Provenance
    revision: int = strawberry.field(
        description="The document revision this is (1 when imported; every chunk edit, "
        "re-import, delete and restore writes the next)."
    )

    @classmethod
    def of(cls, s: models.DocumentSummary) -> DocumentSummary:
        return cls(
            id=ID(s.id),
            title=s.title,
            path=s.path,
            chunk_count=s.chunk_count,
            created_at=s.created_at,
            updated_at=s.updated_at,
            provenance=Provenance.of(s.provenance),
            revision=s.revision,
        )


@strawberry.type(description="A document with its chunk tree (flat, in reading order).")
class Document:
    summary: DocumentSummary
    chunks: list[Chunk]
    markdown: str = strawberry.field(description="The document exported back to Markdown.")

    @classmethod
    def of(cls, d: models.Document) -> Document:
        return cls(
            summary=DocumentSummary.of(d.summary),
            chunks=[Chunk.of(c) for c in d.chunks],
            markdown=ops.export_markdown(d),
        )


@strawberry.input
class DocumentInput:
    markdown: str
    title: str | None = None
    path: str | None = None
    observed_at: Instant | None = None
    new_document: bool = strawberry.field(
        default=False,
        description="True: always a new document. False (default): a live document already "
        "at `path` in the scope gets a new revision instead (unchanged chunks keep their ids).",
    )


@strawberry.type
class DeletedDocument:
    chunks_deleted: int
    fact_sources_removed: int = strawberry.field(
        description="Sources this document gave to facts, withdrawn from every scope the "
        "caller reaches."
    )
    facts_removed: int = strawberry.field(
        description="Facts whose last source was this document, deleted with it."
    )


@strawberry.type
class DocumentQuery:
    @strawberry.field(
        description="Documents in the scope by path prefix, in id order, paged (limit at most "
        f"{ops.MAX_LIST_LIMIT})."
    )
    async def documents(
        self,
        info: Info,
        scope: Scope,
        path_prefix: str = "",
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[DocumentSummary]:
        c = info.context
        found = await ops.list_documents(c.services, c.principal, scope, path_prefix, limit, after)
        return page_of(found, DocumentSummary.of)

    @strawberry.field(
        description="One document with its chunk tree and its Markdown export; null when the "
        "scope holds no such document. `revision` reads that revision whole (NOT_FOUND when "
        "it does not exist); `knownAt` the revision current at that time (null before the "
        "document existed or while it was deleted; a future time reads the present)."
    )
    async def document(
        self,
        info: Info,
        scope: Scope,
        id: ID,
        revision: int | None = None,
        known_at: Instant | None = None,
    ) -> Document | None:
        c = info.context
        found = await ops.get_document(c.services, c.principal, scope, id, revision, known_at)
        return Document.of(found) if found else None

    @strawberry.field(description="One chunk; null when the scope holds no such chunk.")
    async def chunk(self, info: Info, scope: Scope, id: ID) -> Chunk | None:
        c = info.context
        found = await ops.get_chunk(c.services, c.principal, scope, id)
        return Chunk.of(found) if found else None


@strawberry.type
class DocumentMutation:
    @strawberry.mutation(
        description="Import Markdown as a document: headings become parent chunks; paragraphs, "
        "list items, code, tables and quotes become typed chunks with exact source spans. A "
        "live document already at `path` gets a new revision (unless `newDocument`); an "
        "unchanged re-import writes nothing.",
        metadata=costs(EMBEDS),
    )
    async def import_document(
        self,
        info: Info,
        scope: Scope,
        markdown: str,
        title: str | None = None,
        path: str | None = None,
        observed_at: Instant | None = None,
        new_document: bool = False,
    ) -> Document:
        c = info.context
        doc = await ops.import_document(
            c.services, c.principal, scope, markdown, title, path, observed_at, new_document
        )
        return Document.of(doc)

    @strawberry.mutation(
        description="Import up to 100 documents (5 MiB in all) in one transaction: all or none. "
        "Much faster than one call per document for many small documents.",
        metadata=costs(EMBEDS),
    )
    async def import_documents(
        self, info: Info, scope: Scope, documents: list[DocumentInput]
    ) -> list[Document]:
        c = info.context
        drafts = [
            ops.DocumentDraft(d.markdown, d.title, d.path, d.observed_at, d.new_document)
            for d in documents
        ]
        imported = await ops.import_documents(c.services, c.principal, scope, drafts)
        return [Document.of(d) for d in imported]

    @strawberry.mutation(
        description="Edit one chunk's text; a stale `revision` is a CONFLICT.",
        metadata=costs(EMBEDS),
    )
    async def update_chunk(
        self, info: Info, scope: Scope, id: ID, text: str, revision: int
    ) -> Chunk:
        c = info.context
        chunk = await ops.update_chunk(c.services, c.principal, scope, id, text, revision)
        return Chunk.of(chunk)

    @strawberry.mutation(
        description="Delete a document: a tombstone revision; earlier revisions stay "
        "readable and restorable (erasure is what destroys them)."
    )
    async def delete_document(self, info: Info, scope: Scope, id: ID) -> DeletedDocument:
        c = info.context
        deleted = await ops.delete_document(c.services, c.principal, scope, id)
        return DeletedDocument(
            chunks_deleted=deleted.chunks,
            fact_sources_removed=deleted.withdrawn.sources,
            facts_removed=deleted.withdrawn.facts,
        )
