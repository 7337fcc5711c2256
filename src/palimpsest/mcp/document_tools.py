"""MCP tools over documents: import, read, edit a chunk, and the revisions
(docs/decisions/0008-document-revisions.md): history, one revision (or the one known at a
time), a diff, a restore. Thin over ``resolvers/documents/importing.py``,
``resolvers/documents/catalog.py`` and ``resolvers/documents/revisions.py``, the resolvers behind
GraphQL's ``importDocument``, ``document``, ``updateChunk``, ``documentHistory``,
``documentDiff`` and ``restoreDocument``: the same limits and the same errors."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest.domain.documents.markdown import MAX_DOCUMENT_BYTES
from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.identity import Scope
from palimpsest.mcp.hints import READS, writes
from palimpsest.mcp.render import plain
from palimpsest.mcp.strict_args import Int32
from palimpsest.mcp.tools import Caller, ScopeArg, TimeArg
from palimpsest.resolvers import documents as ops
from palimpsest.schema.models import Document

DocId = Annotated[str, Field(description="The document id (import_document answers it).")]
Revision = Annotated[Int32, Field(description="A revision number, from 1.")]
_MIB = MAX_DOCUMENT_BYTES // (1024 * 1024)


class Imported(TypedDict):
    """The new (or re-imported) document's id, title, path, chunk count and scope."""

    id: str
    title: str | None
    path: str | None
    chunk_count: int
    scope: str


class DocumentResult(TypedDict):
    """The document (summary, Markdown, chunks), or null when the scope holds none."""

    document: dict[str, Any] | None


class ChunkResult(TypedDict):
    """The edited chunk, with its new revision."""

    chunk: dict[str, Any]


class HistoryResult(TypedDict):
    """Revisions newest first; pass `cursor` as `after` for the next page (null: no more)."""

    revisions: list[dict[str, Any]]
    cursor: str | None


class DiffResult(TypedDict):
    """A unified diff of the two revisions' Markdown."""

    diff: str


def document_json(doc: Document) -> dict[str, Any]:
    """A revision whole: its summary, its Markdown byte for byte, and its chunks."""
    s = doc.summary
    chunks = [
        {
            "id": c.id,
            "type": c.type,
            "text": c.text,
            "parent_id": c.parent_id,
            "index": c.index,
            "revision": c.revision,  # what chunk_update needs
        }
        for c in doc.chunks
    ]
    found: dict[str, Any] = plain(
        {
            "id": s.id,
            "title": s.title,
            "path": s.path,
            "revision": s.revision,
            "chunk_count": s.chunk_count,
            "updated_at": s.updated_at,
        }
    )
    return {**found, "markdown": ops.export(doc), "chunks": plain(chunks)}


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the document tools to ``server``."""

    @server.tool(
        description="Import a Markdown document: it is split into headings, paragraphs, list "
        "items, code and tables, each searchable. Returns the document id and its chunk count.",
        # Re-importing at a live document's path replaces it (a new revision); unchanged
        # Markdown writes nothing.
        annotations=writes(destructive=True, idempotent=True),
    )
    async def import_document(
        ctx: Context,
        markdown: Annotated[
            str, Field(description=f"The document's Markdown text (<= {_MIB} MiB).")
        ],
        scope: ScopeArg = Scope.USER,
        title: Annotated[str | None, Field(description="Default: the first heading.")] = None,
        path: Annotated[
            str | None, Field(description="A path to list it by, e.g. /notes/a.md")
        ] = None,
        observed_at: TimeArg = None,
    ) -> Imported:
        svc, who = await caller(ctx)
        observed = parse_optional(observed_at, "observed_at")
        doc = await ops.import_document(svc, who, scope, markdown, title, path, observed)
        summary = doc.summary
        return {
            "id": summary.id,
            "title": summary.title,
            "path": summary.path,
            "chunk_count": summary.chunk_count,
            "scope": scope.value,
        }

    @server.tool(
        description="Read a document as it is now: its Markdown and its chunks (each with "
        "the id and revision chunk_update needs); null when the scope holds no such document.",
        annotations=READS,
    )
    async def document_get(ctx: Context, id: DocId, scope: ScopeArg = Scope.USER) -> DocumentResult:
        svc, who = await caller(ctx)
        doc = await ops.get_document(svc, who, scope, id, None, None)
        return {"document": document_json(doc) if doc else None}

    @server.tool(
        description="Replace one chunk's text (a paragraph, list item, code block...). Pass "
        "the chunk's current revision from document_get; a stale one is a CONFLICT, so an "
        "edit never overwrites one you have not seen. Writes a new document revision.",
        annotations=writes(destructive=True, idempotent=True),
    )
    async def chunk_update(
        ctx: Context,
        id: Annotated[str, Field(description="The chunk id (document_get lists them).")],
        text: Annotated[str, Field(description="The chunk's new text.")],
        revision: Annotated[Int32, Field(description="The chunk's revision you last read.")],
        scope: ScopeArg = Scope.USER,
    ) -> ChunkResult:
        svc, who = await caller(ctx)
        chunk = await ops.update_chunk(svc, who, scope, id, text, revision)
        return {"chunk": plain(chunk)}

    @server.tool(
        description="A document's revisions, newest first: every edit, re-import, delete "
        "(deleted: true) and restore wrote one, with when (created_at) and how many chunks "
        "it changed. Page with the returned cursor.",
        annotations=READS,
    )
    async def document_history(
        ctx: Context,
        id: DocId,
        scope: ScopeArg = Scope.USER,
        limit: Annotated[int, Field(ge=1, le=ops.MAX_HISTORY_LIMIT)] = 100,
        after: Annotated[str | None, Field(description="The cursor of the previous page.")] = None,
    ) -> HistoryResult:
        svc, who = await caller(ctx)
        found = await ops.history(svc, who, scope, id, limit, after)
        return {"revisions": [plain(r) for r in found.items], "cursor": found.cursor}

    @server.tool(
        description="Read a document as it was: `revision` reads that revision whole, "
        "`known_at` the revision current at that time (null before it existed or while it "
        "was deleted); neither reads the present. The Markdown is exactly that revision's.",
        annotations=READS,
    )
    async def document_revision(
        ctx: Context,
        id: DocId,
        scope: ScopeArg = Scope.USER,
        revision: Annotated[Int32 | None, Field(description="A revision number, from 1.")] = None,
        known_at: TimeArg = None,
    ) -> DocumentResult:
        svc, who = await caller(ctx)
        at = parse_optional(known_at, "known_at")
        doc = await ops.get_document(svc, who, scope, id, revision, at)
        return {"document": document_json(doc) if doc else None}

    @server.tool(
        description="A unified diff of two revisions' Markdown (a deletion reads as empty); "
        "from_revision must not be after to_revision.",
        annotations=READS,
    )
    async def document_diff(
        ctx: Context,
        id: DocId,
        from_revision: Revision,
        to_revision: Revision,
        scope: ScopeArg = Scope.USER,
    ) -> DiffResult:
        svc, who = await caller(ctx)
        return {"diff": await ops.diff(svc, who, scope, id, from_revision, to_revision)}

    @server.tool(
        description="Restore a past revision of a document (also of a deleted one): writes a "
        "new revision equal to it; history is never rewritten.",
        annotations=writes(destructive=True, idempotent=False),
    )
    async def restore_document(
        ctx: Context, id: DocId, revision: Revision, scope: ScopeArg = Scope.USER
    ) -> DocumentResult:
        svc, who = await caller(ctx)
        return {"document": document_json(await ops.restore(svc, who, scope, id, revision))}
