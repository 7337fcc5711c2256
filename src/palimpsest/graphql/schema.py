"""Schema assembly: one Query and one Mutation merged from the per-plane field groups."""

from __future__ import annotations

from collections.abc import Sequence

import strawberry
from strawberry.extensions import SchemaExtension
from strawberry.schema.config import StrawberryConfig
from strawberry.tools import merge_types

from palimpsest.graphql.admin import AdminMutation, AdminQuery
from palimpsest.graphql.context import Info
from palimpsest.graphql.context_block import ContextQuery
from palimpsest.graphql.document_revisions import DocumentRevisionMutation, DocumentRevisionQuery
from palimpsest.graphql.documents import DocumentMutation, DocumentQuery
from palimpsest.graphql.embedding_status import EmbeddingStatusQuery
from palimpsest.graphql.entities import EntityMutation, EntityQuery
from palimpsest.graphql.erasure import ErasureMutation, ExportQuery
from palimpsest.graphql.errors import CodedSchema
from palimpsest.graphql.fact_writes import FactWriteMutation
from palimpsest.graphql.facts import FactMutation, FactQuery
from palimpsest.graphql.harvest import HarvestMutation, HarvestQuery
from palimpsest.graphql.memory import MemoryMutation, MemoryQuery
from palimpsest.graphql.memory_files import MemoryFileMutation, MemoryFileQuery
from palimpsest.graphql.placement import PlacementMutation, PlacementQuery
from palimpsest.graphql.recall import RecallQuery
from palimpsest.graphql.retention import RetentionMutation, RetentionQuery
from palimpsest.graphql.scalars import SCALAR_MAP
from palimpsest.graphql.sql import SqlMutation, SqlQuery
from palimpsest.graphql.store import StoreQuery
from palimpsest.graphql.types import Me
from palimpsest.graphql.usage import UsageQuery


@strawberry.type
class CoreQuery:
    @strawberry.field(description="Public liveness check; the only field that needs no token.")
    def health(self) -> str:
        return "ok"

    @strawberry.field(description="The caller as the run token names it, with resolved grants.")
    def me(self, info: Info) -> Me:
        return Me.of(info.context.principal)


Query = merge_types(
    "Query",
    (
        CoreQuery,
        MemoryQuery,
        DocumentQuery,
        DocumentRevisionQuery,
        FactQuery,
        EntityQuery,
        PlacementQuery,
        RecallQuery,
        ContextQuery,
        SqlQuery,
        ExportQuery,
        AdminQuery,
        HarvestQuery,
        MemoryFileQuery,
        StoreQuery,
        RetentionQuery,
        UsageQuery,
        EmbeddingStatusQuery,
    ),
)
Mutation = merge_types(
    "Mutation",
    (
        MemoryMutation,
        DocumentMutation,
        DocumentRevisionMutation,
        FactMutation,
        FactWriteMutation,
        EntityMutation,
        PlacementMutation,
        SqlMutation,
        ErasureMutation,
        AdminMutation,
        HarvestMutation,
        MemoryFileMutation,
        RetentionMutation,
    ),
)


def build_schema(extensions: Sequence[type[SchemaExtension]] = ()) -> CodedSchema:
    return CodedSchema(
        query=Query,
        mutation=Mutation,
        extensions=list(extensions),
        config=StrawberryConfig(scalar_map=SCALAR_MAP),
    )
