"""``usage``: what one scope stores on every plane, exactly counted, beside its limits
(docs/reference/quotas.md). Reading it needs the scope's memory grant; its SQL row needs the
SQL grant too, and is left out without it."""

from __future__ import annotations

from dataclasses import dataclass

from palimpsest.cypher import memory as mq
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.errors import Forbidden
from palimpsest.identity import Plane as Grant
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas


@dataclass(frozen=True, slots=True)
class PlaneUsage:
    plane: str
    used: int
    limit: int | None  # None: no limit
    setting: str


@dataclass(frozen=True, slots=True)
class Usage:
    scope: Scope
    planes: tuple[PlaneUsage, ...]


async def usage(svc: Services, who: Principal, scope: Scope) -> Usage:
    ref = resolve_scope(who, scope)
    settings = svc.settings
    now = svc.clock()

    def row(plane: str, used: int, limit: int, setting: str) -> PlaneUsage:
        return PlaneUsage(plane, used, limit or None, "PALIMPSEST_" + setting.upper())

    async def work(tx: ScopedTx) -> list[PlaneUsage]:
        [live] = await tx.run(mq.SCOPE_USAGE, {"key": "", "now": now})
        rows = [
            row("noteBytes", int(live["used"]), settings.limits.max_scope_bytes, "max_scope_bytes")
        ]
        for plane, counted in quotas.PLANES.items():
            used = await quotas.exact(tx, plane)
            rows.append(
                row(plane.value, used, getattr(settings.limits, counted.setting), counted.setting)
            )
        return rows

    planes = await svc.db.scoped(ref).read_tx(work)
    try:
        sql_ref = resolve_scope(who, scope, Grant.SQL)
    except Forbidden:
        return Usage(scope, tuple(planes))
    found = [d.bytes for d in await svc.sql.databases() if d.key == sql_ref.scope_key]
    planes.append(row("sqlBytes", sum(found), settings.sql.max_db_bytes, "sql_max_db_bytes"))
    return Usage(scope, tuple(planes))
