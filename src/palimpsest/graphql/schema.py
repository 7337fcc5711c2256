"""Schema assembly: one Query and one Mutation merged from the per-plane field groups."""

from __future__ import annotations

from collections.abc import Sequence

import strawberry
from strawberry.extensions import SchemaExtension
from strawberry.tools import merge_types

from palimpsest.graphql.context import Info
from palimpsest.graphql.errors import CodedSchema
from palimpsest.graphql.memory import MemoryMutation, MemoryQuery
from palimpsest.graphql.types import Me


@strawberry.type
class CoreQuery:
    @strawberry.field(description="Public liveness check; the only field that needs no token.")
    def health(self) -> str:
        return "ok"

    @strawberry.field(description="The caller as the run token names it, with resolved grants.")
    def me(self, info: Info) -> Me:
        return Me.of(info.context.principal)


Query = merge_types("Query", (CoreQuery, MemoryQuery))
Mutation = merge_types("Mutation", (MemoryMutation,))


def build_schema(extensions: Sequence[type[SchemaExtension]] = ()) -> CodedSchema:
    return CodedSchema(query=Query, mutation=Mutation, extensions=list(extensions))
