"""The erasure audit trail for tenant admins: every erasure's receipt, newest first."""

from __future__ import annotations

from palimpsest import paging
from palimpsest.identity import Principal
from palimpsest.identity.permissions import require, tenant_records_reader
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.resolvers.erasure import jobs
from palimpsest.resolvers.erasure.jobs import Receipt
from palimpsest.resolvers.services import Services

MAX_LIST_LIMIT = 1000
LIST_NAME = "erasures"
_POSITION = (paging.Part.TIME, paging.Part.ID)


async def list_erasures(
    svc: Services, who: Principal, limit: int, after: str | None
) -> paging.Page[Receipt]:
    require(
        tenant_records_reader(who), "the erasure audit trail is for (non-isolated) tenant admins"
    )
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, LIST_NAME, _POSITION)
    before = (position[0], position[1]) if position else None
    found = await jobs.list_jobs(svc, tenant_config_ref(who), limit + 1, before)
    return paging.page(found, limit, LIST_NAME, lambda r: [r.requested_at, r.id])
