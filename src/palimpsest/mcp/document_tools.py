"""MCP tools over document revisions (docs/decisions/0008-document-revisions.md): history,
one revision (or the one known at a time), a diff, a restore. Thin over
``resolvers/document_revisions.py``: the same limits and the same errors as GraphQL."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest.identity import Scope
from palimpsest.mcp.render import plain
from palimpsest.mcp.tools import Caller, ScopeArg, TimeArg
from palimpsest.resolvers import document_revisions as ops
from palimpsest.resolvers import documents
from palimpsest.schema.models import Document
from palimpsest.timeparse import parse_optional

DocId = Annotated[str, Field(description="The document id (import_document answers it).")]
Revision = Annotated[int, Field(description="A revision number, from 1.")]


def document_json(doc: Document) -> dict[str, Any]:
    """A revision whole: its summary, its Markdown byte for byte, and its chunks."""
    s = doc.summary
    chunks = [
        {"id": c.id, "type": c.type, "text": c.text, "parent_id": c.parent_id, "index": c.index}
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
    """Add the document revision tools to ``server``."""

    @server.tool(
        description="A document's revisions, newest first: every edit, re-import, delete "
        "(deleted: true) and restore wrote one, with when (created_at) and how many chunks "
        "it changed. Page with the returned cursor."
    )
    async def document_history(
        ctx: Context,
        id: DocId,
        scope: ScopeArg = Scope.USER,
        limit: Annotated[int, Field(ge=1, le=ops.MAX_HISTORY_LIMIT)] = 100,
        after: Annotated[str | None, Field(description="The cursor of the previous page.")] = None,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        found = await ops.history(svc, who, scope, id, limit, after)
        return {"revisions": [plain(r) for r in found.items], "cursor": found.cursor}

    @server.tool(
        description="Read a document as it was: `revision` reads that revision whole, "
        "`known_at` the revision current at that time (null before it existed or while it "
        "was deleted); neither reads the present. The Markdown is exactly that revision's."
    )
    async def document_revision(
        ctx: Context,
        id: DocId,
        scope: ScopeArg = Scope.USER,
        revision: Annotated[int | None, Field(description="A revision number, from 1.")] = None,
        known_at: TimeArg = None,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        at = parse_optional(known_at, "known_at")
        doc = await documents.get_document(svc, who, scope, id, revision, at)
        return {"document": document_json(doc) if doc else None}

    @server.tool(
        description="A unified diff of two revisions' Markdown (a deletion reads as empty); "
        "from_revision must not be after to_revision."
    )
    async def document_diff(
        ctx: Context,
        id: DocId,
        from_revision: Revision,
        to_revision: Revision,
        scope: ScopeArg = Scope.USER,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        return {"diff": await ops.diff(svc, who, scope, id, from_revision, to_revision)}

    @server.tool(
        description="Restore a past revision of a document (also of a deleted one): writes a "
        "new revision equal to it; history is never rewritten."
    )
    async def restore_document(
        ctx: Context, id: DocId, revision: Revision, scope: ScopeArg = Scope.USER
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        return {"document": document_json(await ops.restore(svc, who, scope, id, revision))}
