"""Tenant-admin fields that name a user, and the erasure audit trail, kept together.

``userId`` here is the one argument in the API that names an owner. Whether the caller may
name one is decided in one place, ``identity.person_refs`` (a non-isolated admin of the
same tenant); the introspection test allows exactly these arguments.
"""

from __future__ import annotations

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.erasure import ErasureReceipt
from palimpsest.resolvers import erasure as ops
from palimpsest.resolvers import erasure_audit as audit


@strawberry.type(description="A page of erasure records, newest first.")
class ErasurePage:
    items: list[ErasureReceipt]
    cursor: str | None = strawberry.field(description="Pass as `after` for the next page.")
    has_more: bool


@strawberry.type
class AdminQuery:
    @strawberry.field(
        description="Admin: the tenant's erasure audit trail, newest first (counts, who asked "
        "and when; no content)."
    )
    async def erasures(self, info: Info, limit: int = 50, after: str | None = None) -> ErasurePage:
        c = info.context
        page = await audit.list_erasures(c.services, c.principal, limit, after)
        return ErasurePage(
            items=[ErasureReceipt.of(r) for r in page.items],
            cursor=page.cursor,
            has_more=page.has_more,
        )


@strawberry.type
class AdminMutation:
    @strawberry.mutation(
        description="Admin: erase everything a user of this tenant owns, across every plane "
        "(see eraseMe). Re-running for the same user resumes an interrupted erasure."
    )
    async def erase_user(self, info: Info, user_id: strawberry.ID) -> ErasureReceipt:
        c = info.context
        return ErasureReceipt.of(await ops.erase_user(c.services, c.principal, str(user_id)))
