"""SQL Memory (docs/spec.md, Planes): scope-checked queries and atomic batches, admin listing.

Agent calls resolve their scope on the SQL plane (``sql_scopes``) and reach only that scope's
database. Admin calls see databases by their owner record, failing closed:

- ``TENANT`` view: a non-isolated admin (or operator) sees the databases of their own tenant
  (agent, user and tenant scopes); never another tenant's, never GLOBAL's, never a file
  without an owner record.
- ``GLOBAL`` view: everything, only when ``resolve_scope(GLOBAL, SQL)`` succeeds: the platform
  operator role, not isolated, GLOBAL not left out of ``sql_scopes``. A tenant admin never
  reaches other tenants.

Erasure takes a database id from the listing and the same view (TENANT unless GLOBAL is asked
for), so reaching outside the own tenant is always explicit; an id outside the view gets the
same ``NOT_FOUND`` as one that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from palimpsest import paging
from palimpsest.errors import InvalidArgument, NotFound
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.identity.permissions import admin_or_operator, not_isolated, require
from palimpsest.identity.scopes import Plane
from palimpsest.resolvers.services import Services
from palimpsest.sqlmem import DatabaseInfo, ExecResult, QueryResult, SqlStatement

Visible = Callable[[DatabaseInfo], bool]
MAX_LIST_LIMIT = 1000
LIST_NAME = "sqlDatabases"


async def query(
    svc: Services, who: Principal, scope: Scope, statement: str, args: Any
) -> QueryResult:
    ref = resolve_scope(who, scope, Plane.SQL)
    return await svc.sql.query(ref, statement, args)


async def execute(
    svc: Services, who: Principal, scope: Scope, statements: Sequence[SqlStatement]
) -> list[ExecResult]:
    ref = resolve_scope(who, scope, Plane.SQL)
    return await svc.sql.execute(ref, statements)


async def databases(
    svc: Services, who: Principal, view: Scope, limit: int, after: str | None
) -> paging.Page[DatabaseInfo]:
    """The view's databases in id order, paged (the listing is read from disk each time)."""
    visible = _view(who, view)
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, LIST_NAME, (paging.Part.ID,))
    start = position[0] if position else ""
    found = sorted(
        (d for d in await svc.sql.databases() if visible(d) and d.key > start),
        key=lambda d: d.key,
    )
    return paging.page(found[: limit + 1], limit, LIST_NAME, lambda d: [d.key])


async def erase(svc: Services, who: Principal, database_id: str, view: Scope) -> int:
    """Erase one database inside the caller's chosen view; the bytes freed."""
    visible = _view(who, view)
    found = [d for d in await svc.sql.databases() if d.key == database_id and visible(d)]
    if not found:
        raise NotFound("no such SQL database")
    freed = await svc.sql.erase(found[0].key)
    if freed is None:
        raise NotFound("no such SQL database")
    return freed


def _view(who: Principal, view: Scope) -> Visible:
    if view is Scope.GLOBAL:
        resolve_scope(who, Scope.GLOBAL, Plane.SQL)  # raises unless an operator has GLOBAL
        return lambda d: True
    require(admin_or_operator(who), "listing or erasing SQL databases needs the admin role")
    if view is Scope.TENANT:
        require(not_isolated(who), "isolated member: the tenant's SQL databases are not visible")
        tenant = who.tenant_id
        return lambda d: d.tenant_id == tenant and d.scope not in (None, Scope.GLOBAL)
    raise InvalidArgument("list with scope TENANT (this tenant) or GLOBAL (every tenant)")
