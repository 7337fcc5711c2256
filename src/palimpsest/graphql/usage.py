"""``usage``: one scope's numbers and limits per plane (resolvers/tenant/plane_usage.py)."""

from __future__ import annotations

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.scalars import Int64
from palimpsest.graphql.types import Scope
from palimpsest.resolvers import tenant as ops


@strawberry.type(description="What a scope stores on one plane, and its limit.")
class PlaneUsage:
    plane: str = strawberry.field(
        description="noteBytes, versions, notes, documentBytes, chunks, facts, entities, "
        "pendingSpans or sqlBytes: the name a QUOTA_EXCEEDED refusal gives in `plane`."
    )
    used: Int64 = strawberry.field(description="Counted now, exactly.")
    limit: Int64 | None = strawberry.field(description="The limit; null: none.")
    setting: str = strawberry.field(description="The setting that holds the limit.")

    @classmethod
    def of(cls, p: ops.PlaneUsage) -> PlaneUsage:
        limit = None if p.limit is None else Int64(p.limit)
        return cls(plane=p.plane, used=Int64(p.used), limit=limit, setting=p.setting)


@strawberry.type(description="One scope's usage on every plane (docs/reference/quotas.md).")
class Usage:
    scope: Scope
    planes: list[PlaneUsage]


@strawberry.type
class UsageQuery:
    @strawberry.field(
        description="What the scope stores on every plane, beside each limit. SQL bytes "
        "appear only with the scope's SQL grant."
    )
    async def usage(self, info: Info, scope: Scope) -> Usage:
        c = info.context
        found = await ops.usage(c.services, c.principal, scope)
        return Usage(scope=found.scope, planes=[PlaneUsage.of(p) for p in found.planes])
