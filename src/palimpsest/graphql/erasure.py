"""GraphQL fields a caller uses on their own data: eraseMe, eraseSubject, exportMe.

The admin fields that name a user (eraseUser) and the audit trail live in ``admin.py``.
"""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry import ID

from palimpsest.graphql.context import Info
from palimpsest.graphql.erasure_policy import AuthoredErasure
from palimpsest.graphql.facts import EntityInput
from palimpsest.graphql.scalars import Int64
from palimpsest.graphql.types import Scope
from palimpsest.resolvers import erasure as ops
from palimpsest.resolvers import portability
from palimpsest.resolvers.erasure import Counts, ErasureKind, ErasureStatus, Receipt
from palimpsest.schema.drafts import EntityRef

strawberry.enum(
    ErasureKind, name="ErasureKind", description="A whole person (USER) or one SUBJECT."
)
strawberry.enum(
    ErasureStatus,
    name="ErasureStatus",
    description="DONE, or RUNNING for an interrupted job: call it again to finish it.",
)


@strawberry.type(description="What an erasure removed, per plane, over all its attempts.")
class ErasureCounts:
    entries: int = strawberry.field(description="Key/value entries.")
    documents: int
    chunks: int
    entities: int
    facts: int
    fact_sources: int = strawberry.field(
        description="Sources withdrawn from facts (a fact goes only with its last source)."
    )
    sql_databases: int
    sql_bytes: Int64 = strawberry.field(description="Bytes of the SQL files deleted.")
    spans: int = strawberry.field(description="Pending spans: queued, leased and dead-letter.")
    chunk_revisions: int = strawberry.field(
        default=0, description="Closed chunk versions: the chunks of past document revisions."
    )
    document_revisions: int = strawberry.field(
        default=0, description="Document revision records (every revision of every document)."
    )
    note_versions: int = strawberry.field(
        default=0, description="Past versions and tombstones of key/value entries."
    )

    @classmethod
    def of(cls, c: Counts) -> ErasureCounts:
        return cls(
            entries=c.entries,
            note_versions=c.note_versions,
            documents=c.documents,
            chunks=c.chunks,
            entities=c.entities,
            facts=c.facts,
            fact_sources=c.fact_sources,
            sql_databases=c.sql_databases,
            sql_bytes=Int64(c.sql_bytes),
            spans=c.spans,
            chunk_revisions=c.chunk_revisions,
            document_revisions=c.document_revisions,
        )


@strawberry.type(
    description="The receipt of an erasure, also its audit record: counts, who asked and "
    "when; never what was erased."
)
class ErasureReceipt:
    id: ID
    kind: ErasureKind
    scope: Scope = strawberry.field(description="The scope the erasure targeted.")
    status: ErasureStatus
    requested_by: str = strawberry.field(
        description="The asking admin's user id, agent or `operator`; `self` for eraseMe."
    )
    requested_at: datetime
    finished_at: datetime | None
    attempts: int
    removed: ErasureCounts
    matched: bool = strawberry.field(
        description="Whether the erasure found anything of its target. False: nothing of "
        "that user is here (user ids are case-sensitive and compared exactly)."
    )
    authored: AuthoredErasure | None = strawberry.field(
        default=None,
        description="A person's erasure: the rows they wrote in TENANT, AGENT and GLOBAL "
        "scopes, deleted or anonymised by the tenant's erasurePolicy. Null for a subject's.",
    )

    @classmethod
    def of(cls, r: Receipt) -> ErasureReceipt:
        return cls(
            id=ID(r.id),
            kind=r.kind,
            scope=Scope(r.target_scope),
            status=r.status,
            requested_by=r.requested_by,
            requested_at=r.requested_at,
            finished_at=r.finished_at,
            attempts=r.attempts,
            removed=ErasureCounts.of(r.removed),
            matched=r.matched,
            authored=AuthoredErasure.of(r.authored) if r.authored else None,
        )


@strawberry.type(description="Everything you own, as JSON Lines (see the README for the format).")
class PersonalExport:
    format: str
    version: int
    lines: list[str] = strawberry.field(
        description="A header, one JSON object per row with its provenance, an end record."
    )
    bytes: Int64


@strawberry.type
class ExportQuery:
    @strawberry.field(
        description="Export everything you own in this tenant, every plane, with provenance: "
        "the format `palimpsest import` loads. Limited to PALIMPSEST_EXPORT_MAX_BYTES "
        "(16 MiB by default); a larger export is QUOTA_EXCEEDED (an operator runs "
        "`palimpsest export`)."
    )
    async def export_me(self, info: Info) -> PersonalExport:
        c = info.context
        lines = await portability.export_me(c.services, c.principal)
        size = sum(len(line.encode()) + 1 for line in lines)
        return PersonalExport(
            format=portability.FORMAT, version=portability.VERSION, lines=lines, bytes=Int64(size)
        )


@strawberry.type
class ErasureMutation:
    @strawberry.mutation(
        description="Erase everything you own in this tenant, across every plane: entries, "
        "documents and chunks, entities and facts of your USER scope, your sources on tenant "
        "facts and the tenant facts you wrote without one, your SQL database, your pending "
        "spans. Agent scopes are the agents' and stay. Re-running resumes an interrupted one."
    )
    async def erase_me(self, info: Info) -> ErasureReceipt:
        c = info.context
        return ErasureReceipt.of(await ops.erase_me(c.services, c.principal))

    @strawberry.mutation(
        description="Erase one entity, the facts about it and its mention edges from a scope "
        "(TENANT and GLOBAL need the admin role). Chunks stay: their text is the documents'."
    )
    async def erase_subject(self, info: Info, scope: Scope, subject: EntityInput) -> ErasureReceipt:
        c = info.context
        ref = EntityRef(subject.type, subject.name)
        return ErasureReceipt.of(await ops.erase_subject(c.services, c.principal, scope, ref))
