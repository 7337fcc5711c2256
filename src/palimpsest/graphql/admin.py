"""Tenant-admin fields that name a user, and the erasure audit trail, kept together.

``userId`` here is the one argument in the API that names an owner. Whether the caller may
name one is decided in one place, ``identity.person_refs`` (a non-isolated admin of the
same tenant); the introspection test allows exactly these arguments.
"""

from __future__ import annotations

import strawberry

from palimpsest import paging
from palimpsest.graphql.context import Info
from palimpsest.graphql.erasure import ErasureReceipt
from palimpsest.graphql.erasure_policy import ErasurePolicy
from palimpsest.graphql.types import AfterArg, LimitArg, Page, page_of
from palimpsest.resolvers import erasure as ops
from palimpsest.resolvers.erasure import AuthoredPolicy


@strawberry.type
class AdminQuery:
    @strawberry.field(
        description="Admin: the tenant's erasure audit trail, newest first (counts, who asked "
        f"and when; no content), paged (limit at most {ops.MAX_LIST_LIMIT})."
    )
    async def erasures(
        self, info: Info, limit: LimitArg = paging.DEFAULT_LIMIT, after: AfterArg = None
    ) -> Page[ErasureReceipt]:
        c = info.context
        found = await ops.list_erasures(c.services, c.principal, limit, after)
        return page_of(found, ErasureReceipt.of)

    @strawberry.field(
        description="Admin: the tenant's erasure policy (what erasing a person does to the "
        "rows they wrote in shared scopes)."
    )
    async def erasure_policy(self, info: Info) -> ErasurePolicy:
        c = info.context
        return ErasurePolicy.of(await ops.erasure_policy(c.services, c.principal))


@strawberry.type
class AdminMutation:
    @strawberry.mutation(
        description="Admin: erase everything a user of this tenant owns, across every plane "
        "(see eraseMe). Re-running for the same user resumes an interrupted erasure."
    )
    async def erase_user(self, info: Info, user_id: strawberry.ID) -> ErasureReceipt:
        c = info.context
        return ErasureReceipt.of(await ops.erase_user(c.services, c.principal, str(user_id)))

    @strawberry.mutation(
        description="Admin: set what erasing a person does to the rows they wrote in TENANT, "
        "AGENT and GLOBAL scopes (DELETE by default, or ANONYMISE). A running erasure keeps "
        "the policy it started with."
    )
    async def set_erasure_policy(self, info: Info, authored: AuthoredPolicy) -> ErasurePolicy:
        c = info.context
        found = await ops.set_erasure_policy(c.services, c.principal, authored.value)
        return ErasurePolicy.of(found)
