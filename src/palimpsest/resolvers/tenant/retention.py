"""A tenant's retention policy (how long the sweep keeps the past) and the swept horizon a
``knownAt`` read is checked against.

By default versions and tombstones are kept for ever (the product's promise); a tenant admin
opts in to shorter windows with ``setRetentionPolicy``. The policy lives on the tenant scope's
``:Scope`` node; a null window there means the server's setting.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from palimpsest.config import Settings
from palimpsest.cypher import sweep as q
from palimpsest.cypher.driver.executor import Row, ScopedDatabase
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal
from palimpsest.identity.permissions import not_isolated, require, tenant_admin
from palimpsest.identity.scopes import ScopeRef, tenant_config_ref
from palimpsest.resolvers.services import Services

MAX_WINDOW_SECONDS = 2**31 - 1  # a GraphQL Int; about 68 years
_WINDOWS = ("versions_seconds", "tombstones_seconds", "done_spans_seconds")


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Windows in seconds (0: kept for ever); ``overridden`` names the windows the tenant set
    itself (the others are the server's settings)."""

    versions_seconds: int
    tombstones_seconds: int
    done_spans_seconds: int
    overridden: tuple[str, ...]

    def cutoff(self, window: int, now: datetime) -> datetime | None:
        """Rows that ended before this are past the window (None: kept for ever)."""
        return now - timedelta(seconds=window) if window else None


def policy_of(settings: Settings, row: Row | None) -> RetentionPolicy:
    """The effective policy: the tenant's windows where set, else the server's settings."""
    defaults = {
        "versions_seconds": settings.queue.retention_versions_seconds,
        "tombstones_seconds": settings.queue.retention_tombstones_seconds,
        "done_spans_seconds": settings.queue.retention_done_spans_seconds,
    }
    own = {k: row[k] for k in _WINDOWS if row is not None and row[k] is not None}
    merged = {**defaults, **{k: int(v) for k, v in own.items()}}
    return RetentionPolicy(**merged, overridden=tuple(k for k in _WINDOWS if k in own))


async def tenant_policy(svc: Services, tenant: ScopeRef) -> RetentionPolicy:
    rows = await svc.db.scoped(tenant).read(q.READ_RETENTION, {})
    return policy_of(svc.settings, rows[0] if rows else None)


async def retention_policy(svc: Services, who: Principal) -> RetentionPolicy:
    """The caller's tenant's policy (any member may read it: it holds no one's data)."""
    return await tenant_policy(svc, tenant_config_ref(who))


async def set_retention_policy(
    svc: Services,
    who: Principal,
    versions_seconds: int | None,
    tombstones_seconds: int | None,
    done_spans_seconds: int | None,
) -> RetentionPolicy:
    """Set every window of the tenant's policy at once; null returns a window to the
    server's setting, 0 keeps that past for ever."""
    require(
        tenant_admin(who) and not_isolated(who),
        "the retention policy is set by a (non-isolated) tenant admin",
    )
    windows = {
        "versions_seconds": versions_seconds,
        "tombstones_seconds": tombstones_seconds,
        "done_spans_seconds": done_spans_seconds,
    }
    for name, value in windows.items():
        if value is not None and not 0 <= value <= MAX_WINDOW_SECONDS:
            raise InvalidArgument(
                f"{_wire(name)} must be between 0 (for ever) and {MAX_WINDOW_SECONDS}",
                limit=MAX_WINDOW_SECONDS,
            )
    params = {**windows, "now": svc.clock()}
    rows = await svc.db.scoped(tenant_config_ref(who)).write(q.SET_RETENTION, params)
    return policy_of(svc.settings, rows[0])


async def check_known_at(
    db: ScopedDatabase, known_at: datetime | None, *, notes: bool = True, documents: bool = False
) -> None:
    """Refuse a ``knownAt`` read before the scope's swept horizon (of its notes, and with
    ``documents`` of its document revisions): the states it could have read there may be
    gone, and an answer must never look as if they had not existed."""
    if known_at is None:
        return
    rows = await db.read(q.READ_RETENTION, {})
    if not rows:
        return
    planes = (("history_swept_before", "note", notes),
              ("document_history_swept_before", "document", documents))  # fmt: skip
    for column, what, asked in planes:
        horizon = rows[0][column]
        if asked and horizon is not None and known_at < horizon:
            raise InvalidArgument(
                f"knownAt is before {horizon.isoformat()}, where this scope's {what} history "
                "was swept by its tenant's retention policy; read at or after that time",
                historySwept=True,
                historySweptBefore=horizon.isoformat(),
            )


def check_document_past(document: Row, revision: int | None, known_at: datetime | None) -> None:
    """Refuse a read of a document revision a sweep removed (``revision`` at or before the
    document's mark, or ``known_at`` before the end of the last revision it removed)."""
    swept = document.get("history_swept_revision")
    horizon = document.get("history_swept_before")
    if swept is None or horizon is None:
        return
    if revision is not None:
        gone = revision <= int(swept)
    else:
        gone = known_at is not None and known_at < horizon
    if gone:
        raise InvalidArgument(
            f"revisions 1-{swept} of this document, everything it held before "
            f"{horizon.isoformat()}, were swept by its tenant's retention policy; read a later "
            "revision, or at or after that time",
            historySwept=True,
            historySweptBefore=horizon.isoformat(),
            historySweptRevision=int(swept),
        )


def _wire(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
