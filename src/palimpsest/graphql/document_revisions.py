"""GraphQL fields of document revisions: history, diff, restore."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry import ID

from palimpsest import paging
from palimpsest.graphql.context import Info
from palimpsest.graphql.documents import Document
from palimpsest.graphql.types import AfterArg, LimitArg, Page, Provenance, Scope, page_of
from palimpsest.resolvers import documents as ops


@strawberry.type(description="One revision of a document: every change writes one.")
class DocumentRevision:
    revision: int
    created_at: datetime
    deleted: bool = strawberry.field(description="True for the tombstone a delete writes.")
    changed_chunks: int | None = strawberry.field(
        description="Chunks this revision wrote or closed (all of them for the first); null "
        "for a revision written before revisions were recorded."
    )
    provenance: Provenance

    @classmethod
    def of(cls, r: ops.DocumentRevision) -> DocumentRevision:
        return cls(
            revision=r.revision,
            created_at=r.created_at,
            deleted=r.deleted,
            changed_chunks=r.changed_chunks,
            provenance=Provenance.of(r.provenance),
        )


@strawberry.type
class DocumentRevisionQuery:
    @strawberry.field(
        description="A document's revisions, newest first, paged (limit at most "
        f"{ops.MAX_HISTORY_LIMIT}); a deleted document keeps its history. NOT_FOUND when the "
        "scope holds no such document."
    )
    async def document_history(
        self,
        info: Info,
        scope: Scope,
        id: ID,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[DocumentRevision]:
        c = info.context
        found = await ops.history(c.services, c.principal, scope, id, limit, after)
        return page_of(found, DocumentRevision.of)

    @strawberry.field(
        description="A unified diff of two revisions' Markdown (a deletion reads as empty). "
        "`fromRevision` after `toRevision` is INVALID_ARGUMENT; a missing revision NOT_FOUND."
    )
    async def document_diff(
        self, info: Info, scope: Scope, id: ID, from_revision: int, to_revision: int
    ) -> str:
        c = info.context
        return await ops.diff(c.services, c.principal, scope, id, from_revision, to_revision)


@strawberry.type
class DocumentRevisionMutation:
    @strawberry.mutation(
        description="Write a new revision equal to `revision` (also of a deleted document); "
        "history is never rewritten. NOT_FOUND for a missing revision or document."
    )
    async def restore_document(self, info: Info, scope: Scope, id: ID, revision: int) -> Document:
        c = info.context
        return Document.of(await ops.restore(c.services, c.principal, scope, id, revision))
