"""GraphQL fields of namespaced notes (the LangGraph store's search and namespace listing).
Resolvers only translate; logic is in resolvers/notes/namespaced.py."""

from __future__ import annotations

from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import EmbedsWhen, costs
from palimpsest.graphql.memory import MemoryEntry
from palimpsest.graphql.types import Scope
from palimpsest.resolvers import notes as ops
from palimpsest.schema import models

Labels = Annotated[
    list[str] | None,
    strawberry.argument(description="Namespace labels (non-empty, no '.'); '*' matches one."),
]


@strawberry.type(description="A note under a namespaced key, as a store search finds it.")
class StoreItem:
    namespace: list[str]
    key: str = strawberry.field(description="The item's name within its namespace.")
    score: float | None = strawberry.field(
        description="Cosine similarity to the query (null: no query, or the note has no vector)."
    )
    entry: MemoryEntry

    @classmethod
    def of(cls, n: models.NamespacedNote) -> StoreItem:
        return cls(
            namespace=list(n.namespace),
            key=n.name,
            score=n.score,
            entry=MemoryEntry.of(n.entry),
        )


@strawberry.type(description="One namespace: its labels, outermost first.")
class StoreNamespace:
    labels: list[str]


@strawberry.type
class StoreQuery:
    @strawberry.field(
        description="Notes in a namespace or below it whose values pass `filter` (field path "
        "to a value, or to an object of $eq $ne $gt $gte $lt $lte), nearest `query` first by "
        "the server's embedding, else in key order; `offset` skipped, at most `limit` (1000).",
        metadata=costs(EmbedsWhen("query")),
    )
    async def store_search(
        self,
        info: Info,
        scope: Scope,
        namespace_prefix: list[str],
        filter: JSON | None = None,
        query: str | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[StoreItem]:
        c = info.context
        found = await ops.search(
            c.services, c.principal, scope, namespace_prefix, filter, query, limit, offset
        )
        return [StoreItem.of(n) for n in found]

    @strawberry.field(
        description="The distinct namespaces of live namespaced notes, matching `prefix` and "
        "`suffix`, cut to `maxDepth` labels, in label order, `offset` skipped, at most `limit`."
    )
    async def store_namespaces(
        self,
        info: Info,
        scope: Scope,
        prefix: Labels = None,
        suffix: Labels = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[StoreNamespace]:
        c = info.context
        found = await ops.list_namespaces(
            c.services, c.principal, scope, prefix, suffix, max_depth, limit, offset
        )
        return [StoreNamespace(labels=list(n)) for n in found]
