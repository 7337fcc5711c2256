"""The erasure audit trail for tenant admins: every erasure's receipt, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import Principal
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.resolvers import erasure_jobs as jobs
from palimpsest.resolvers.common import check_id
from palimpsest.resolvers.erasure_jobs import Receipt
from palimpsest.resolvers.services import Services

MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class ErasurePage:
    items: list[Receipt]
    cursor: str | None
    has_more: bool


async def list_erasures(
    svc: Services, who: Principal, limit: int, after: str | None
) -> ErasurePage:
    if not who.is_admin or who.isolated:
        raise Forbidden("the erasure audit trail is for (non-isolated) tenant admins")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}")
    found = await jobs.list_jobs(svc, tenant_config_ref(who), limit + 1, _cursor(after))
    items = found[:limit]
    more = len(found) > limit
    cursor = f"{items[-1].requested_at.isoformat()}|{items[-1].id}" if more else None
    return ErasurePage(items, cursor, more)


def _cursor(after: str | None) -> tuple[datetime, str] | None:
    if after is None:
        return None
    at, _, job_id = after.partition("|")
    try:
        return datetime.fromisoformat(at), check_id(job_id, "after")
    except ValueError as e:
        raise InvalidArgument("after must be a cursor from a previous page") from e
