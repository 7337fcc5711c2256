"""One scope's retention sweep: what its tenant's policy says is past keeping, removed in
bounded batches (cypher/sweep.py).

Each batch is one transaction that takes the scope's write lock first, removes at most
``batch`` rows of one kind and moves the scope's counters with them, so a sweep killed at
any point leaves exact counters, and a re-run simply finds what is left. In order:

1. expired notes become past versions (nothing is lost: a ``knownAt`` read and the history
   answer the same), and the quota's bound and the term statistics shrink with them;
2. past versions that ended before the versions window, and tombstones older than theirs;
3. document revisions that ended before the versions window (never a document's current
   one): the document is marked swept up to them first, then their closed chunk versions and
   revision records go;
4. consolidated queue spans older than theirs;
5. the bound is recomputed from the notes that are left, and the versions bound from the
   versions that are left.

Erasure receipts and the audit trail (``:Erasure``) are never touched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.cypher import sweep as q
from palimpsest.cypher.driver.executor import ScopedDatabase, ScopedTx, Statement
from palimpsest.errors import InvalidArgument
from palimpsest.identity.scopes import ScopeRef, swept_ref
from palimpsest.resolvers import term_index
from palimpsest.resolvers.cycle.harvesting import Status
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant.retention import RetentionPolicy, policy_of, tenant_policy


@dataclass(slots=True)
class Swept:
    """Rows a sweep removed (``expired_notes`` were moved into the past, not deleted)."""

    scopes: int = 0
    expired_notes: int = 0
    versions: int = 0
    tombstones: int = 0
    document_revisions: int = 0
    chunk_versions: int = 0
    done_spans: int = 0
    batches: int = 0

    @property
    def rows(self) -> int:
        return (
            self.expired_notes
            + self.versions
            + self.tombstones
            + self.document_revisions
            + self.chunk_versions
            + self.done_spans
        )

    def add(self, other: Swept) -> None:
        self.scopes += other.scopes
        self.expired_notes += other.expired_notes
        self.versions += other.versions
        self.tombstones += other.tombstones
        self.document_revisions += other.document_revisions
        self.chunk_versions += other.chunk_versions
        self.done_spans += other.done_spans
        self.batches += other.batches

    def as_dict(self) -> dict[str, int]:
        return {
            "scopes": self.scopes,
            "expired_notes": self.expired_notes,
            "versions": self.versions,
            "tombstones": self.tombstones,
            "document_revisions": self.document_revisions,
            "chunk_versions": self.chunk_versions,
            "done_spans": self.done_spans,
            "rows": self.rows,
            "batches": self.batches,
        }


async def sweep_scope(
    svc: Services, ref: ScopeRef, policy: RetentionPolicy, now: datetime, batch: int
) -> Swept:
    """Sweep one scope to ``now`` under ``policy``, ``batch`` rows per transaction."""
    done = Swept(scopes=1)
    db = svc.db.scoped(ref)

    async def archive(tx: ScopedTx) -> int:
        rows = await tx.run(q.ARCHIVE_EXPIRED_NOTES, {"now": now, "batch": batch})
        if rows:
            await term_index.apply(tx, svc.settings, "memory", term_index.removed(rows))
            freed = sum(int(r["bytes"]) for r in rows)
            await _count(tx, bytes_=freed, versions=len(rows))
        return len(rows)

    async def remove(statement: Statement, window: int, *, lock: bool = True, **extra: Any) -> int:
        cutoff = policy.cutoff(window, now)
        if cutoff is None:
            return 0
        versions = statement in (q.DELETE_OLD_VERSIONS, q.DELETE_OLD_TOMBSTONES)

        async def step(tx: ScopedTx) -> int:
            [row] = await tx.run(statement, {"cutoff": cutoff, "batch": batch, **extra})
            removed = int(row["removed"])
            if removed and versions:
                await _count(tx, versions=-removed, latest=row["latest"])
            return removed

        return await _repeat(db, now, step, done, batch, lock=lock)

    async def recount(tx: ScopedTx) -> int:
        await tx.run(q.RECOUNT_NOTES, {})
        return 0

    done.expired_notes = await _repeat(db, now, archive, done, batch)
    done.versions = await remove(q.DELETE_OLD_VERSIONS, policy.versions_seconds)
    done.tombstones = await remove(q.DELETE_OLD_TOMBSTONES, policy.tombstones_seconds)
    # Marks first (they take each document's lock), so no read sees a half-swept past. Not
    # under the scope's lock: document writers take the document's lock before the scope's.
    window = policy.versions_seconds
    await remove(q.MARK_SWEPT_REVISIONS, window, lock=False)
    done.chunk_versions = await remove(q.DELETE_SWEPT_CHUNK_VERSIONS, window, lock=False)
    done.document_revisions = await remove(q.DELETE_SWEPT_REVISIONS, window, lock=False)
    done.done_spans = await remove(q.DELETE_DONE_SPANS, policy.done_spans_seconds, done=Status.DONE)
    if done.rows - done.done_spans:
        await _repeat(db, now, recount, done, batch)
    return done


Work = Callable[[ScopedTx], Awaitable[int]]


async def _repeat(
    db: ScopedDatabase, now: datetime, work: Work, done: Swept, batch: int, *, lock: bool = True
) -> int:
    """Run ``work`` (under the scope's lock unless ``lock`` is false), one transaction each,
    until a batch comes back short (a scope deleted meanwhile has no lock to take: nothing
    to do)."""

    async def locked(tx: ScopedTx) -> int:
        return await work(tx) if not lock or await _locked(tx, now) else 0

    total = 0
    while True:
        n = await db.write_tx(locked)
        done.batches += 1
        total += n
        if n < batch:
            return total


async def _locked(tx: ScopedTx, now: datetime) -> bool:
    return bool(await tx.run(q.LOCK_SWEPT_SCOPE, {"now": now}))


async def _count(
    tx: ScopedTx, *, bytes_: int = 0, versions: int = 0, latest: datetime | None = None
) -> None:
    await tx.run(q.COUNT_SWEPT, {"bytes": bytes_, "versions": versions, "latest": latest})


@dataclass(frozen=True, slots=True)
class Walked:
    """One page of the walk: the scopes swept and where the next page starts (None: the
    walk is over)."""

    swept: Swept
    after: str | None
    skipped: int


async def sweep_page(
    svc: Services, after: str, scopes: int, batch: int, tenant: str | None = None
) -> Walked:
    """Sweep the next ``scopes`` scopes in key order after ``after`` (a walk starts at ""),
    of ``tenant`` only when given."""
    params = {"after": after, "limit": scopes, "tenant": tenant}
    rows = await svc.db.read(q.SWEEP_SCOPES, params)
    now = svc.clock()
    total, skipped = Swept(), 0
    policies: dict[str, RetentionPolicy] = {}
    for row in rows:
        ref = _ref(row)
        if ref is None:
            skipped += 1
            continue
        policy = policies.get(ref.tenant_id)
        if policy is None:
            policy = await _policy(svc, ref.tenant_id)
            policies[ref.tenant_id] = policy
        total.add(await sweep_scope(svc, ref, policy, now, batch))
    last = str(rows[-1]["scope_key"]) if len(rows) == scopes else None
    return Walked(total, last, skipped)


def _ref(row: dict[str, Any]) -> ScopeRef | None:
    """The scope a walked row names, or None for one whose ids do not make its key."""
    parts = (row["tenant_id"], row["scope"], row["owner_id"])
    if any(not isinstance(p, str) for p in parts):
        return None
    try:
        return swept_ref(parts[0], parts[1], parts[2], row["scope_key"])
    except (ValueError, InvalidArgument):
        return None


async def _policy(svc: Services, tenant_id: str) -> RetentionPolicy:
    if not tenant_id:  # GLOBAL belongs to no tenant: the server's settings
        return policy_of(svc.settings, None)
    return await tenant_policy(svc, swept_ref(tenant_id, "TENANT", tenant_id))
