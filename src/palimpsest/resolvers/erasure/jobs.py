"""The durable erasure job: its record, its counted batches, and the start-up journal.

An ``:Erasure`` node in the tenant scope is written before anything is deleted. Every batch
is one transaction that locks the job, deletes a bounded number of rows and adds what it
deleted to the job's counters, so the receipt counts exactly what was removed over every
attempt. A running job is found again by its target (``active_key``), so re-running the
same erasure resumes it; the journal (one small file per running job under
``<home>/erasures``, naming only the tenant and the job) lets the server resume at start-up.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from palimpsest.cypher import erasure as q
from palimpsest.cypher.driver.executor import Row, Tx
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.common import new_id
from palimpsest.resolvers.services import Services

RUNNING = "running"
DONE = "done"


class ErasureKind(StrEnum):
    USER = "user"  # a whole person
    SUBJECT = "subject"  # one entity in one scope


class ErasureStatus(StrEnum):
    RUNNING = RUNNING
    DONE = DONE


_JOURNAL_NAME = re.compile(r"^[0-9a-f]{32}\.json$")


@dataclass(frozen=True, slots=True)
class Counts:
    """What an erasure removed, per plane."""

    entries: int = 0
    documents: int = 0
    chunks: int = 0
    entities: int = 0
    facts: int = 0
    fact_sources: int = 0
    sql_databases: int = 0
    sql_bytes: int = 0
    spans: int = 0
    chunk_revisions: int = 0  # closed chunk versions (past revisions' chunks)
    document_revisions: int = 0  # revision records
    note_versions: int = 0  # past versions and tombstones of notes

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in _FIELDS})

    def total_rows(self) -> int:
        """Rows of the graph and SQL files removed (bytes are not rows)."""
        return sum(getattr(self, f.name) for f in _FIELDS if f.name != "sql_bytes")


_FIELDS = fields(Counts)


class AuthoredPolicy(StrEnum):
    DELETE = "DELETE"
    ANONYMISE = "ANONYMISE"


DEFAULT_POLICY = AuthoredPolicy.DELETE


@dataclass(frozen=True, slots=True)
class Planes:
    """Rows of each plane a person wrote in shared scopes."""

    entries: int = 0
    note_versions: int = 0
    documents: int = 0
    chunks: int = 0
    chunk_revisions: int = 0
    document_revisions: int = 0
    entities: int = 0
    facts: int = 0

    @classmethod
    def of(cls, stored: list[int] | None) -> Planes:
        """From the job's counter list (``PLANES`` order); a missing one is all zero."""
        return cls(*(stored or []))

    def as_list(self) -> list[int]:
        return [getattr(self, p) for p in PLANES]


PLANES = tuple(f.name for f in fields(Planes))


@dataclass(frozen=True, slots=True)
class Authored:
    """The receipt's part for rows the person wrote outside their own scope."""

    policy: AuthoredPolicy
    deleted: Planes
    anonymised: Planes
    # Rows of those scopes written before authorship was stamped: nobody can tell who wrote
    # them, so they were neither deleted nor anonymised.
    unattributed: int


@dataclass(frozen=True, slots=True)
class Receipt:
    id: str
    kind: ErasureKind
    target_scope: str
    status: ErasureStatus
    requested_by: str
    requested_at: datetime
    finished_at: datetime | None
    attempts: int
    removed: Counts
    # False when no batch found anything of the target: the id named nobody with data here.
    matched: bool
    # A person's erasure: what they wrote in shared scopes (None for a subject's).
    authored: Authored | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """A running job as its runner sees it (``user_id`` is kept only while it runs)."""

    receipt: Receipt
    user_id: str | None
    sql_erasing: bool
    policy: AuthoredPolicy | None = None  # kept from the first batch on


def job_from(row: Row) -> Job:
    j = row["job"]
    removed = Counts(**{f.name: int(j[f.name] or 0) for f in _FIELDS})
    # Records written before ``matched`` was kept tell it by their counts.
    matched = j.get("matched")
    receipt = Receipt(
        id=j["id"],
        kind=ErasureKind(j["kind"]),
        target_scope=j["target_scope"],
        status=ErasureStatus(j["status"]),
        requested_by=j["requested_by"],
        requested_at=j["requested_at"],
        finished_at=j["finished_at"],
        attempts=int(j["attempts"]),
        removed=removed,
        matched=removed.total_rows() > 0 if matched is None else bool(matched),
    )
    stored = authored_of(row.get("authored") or {})
    if receipt.kind is ErasureKind.USER:
        receipt = replace(receipt, authored=stored.authored)
    return Job(receipt, j.get("user_id"), bool(j.get("sql_erasing")), stored.policy)


@dataclass(frozen=True, slots=True)
class StoredAuthored:
    policy: AuthoredPolicy | None
    authored: Authored


def authored_of(a: dict[str, Any]) -> StoredAuthored:
    policy = AuthoredPolicy(a["authored_policy"]) if a.get("authored_policy") else None
    deleted = Planes.of(a.get("authored_deleted"))
    anonymised = Planes.of(a.get("authored_anonymised"))
    unattributed = int(a.get("unattributed") or 0)
    shown = Authored(policy or DEFAULT_POLICY, deleted, anonymised, unattributed)
    return StoredAuthored(policy, shown)


async def open_job(
    svc: Services,
    tenant: ScopeRef,
    *,
    kind: ErasureKind,
    target_scope: str,
    active_key: str,
    user_id: str | None,
    requested_by: str,
) -> Job:
    """Start a job, or pick up the running one for the same target (one more attempt)."""
    params = {
        "id": new_id(),
        "active_key": active_key,
        "kind": kind.value,
        "target_scope": target_scope,
        "user_id": user_id,
        "requested_by": requested_by,
        "running": RUNNING,
        "now": svc.clock(),
    }
    [row] = await svc.db.scoped(tenant).write(q.OPEN_JOB, params)
    return job_from(row)


# A batch's work: runs inside the job's transaction and says (rows touched, what it removed).
Work = Callable[[Tx], Awaitable[tuple[int, Counts]]]


async def run_batch(
    svc: Services, tenant: ScopeRef, job_id: str, work: Work, *, sql_erasing: bool | None = None
) -> int:
    """One transaction: lock the job, run ``work``, add its counts. Returns the rows touched
    (0 when the job is already done, so a second runner stops)."""

    async def unit(tx: Tx) -> int:
        job_tx = tx.scoped(tenant)
        [row] = await job_tx.run(q.LOCK_JOB, {"id": job_id, "now": svc.clock()})
        if row["job"]["status"] != RUNNING:
            return 0
        touched, counts = await work(tx)
        params = {
            "id": job_id,
            "add": asdict(counts),
            "sql_erasing": sql_erasing,
            "touched": touched,
        }
        await job_tx.run(q.ADD_COUNTS, params)
        return touched

    return await svc.db.write_tx(unit)


async def get_job(svc: Services, tenant: ScopeRef, job_id: str) -> Job | None:
    rows = await svc.db.scoped(tenant).read(q.GET_JOB, {"id": job_id})
    return job_from(rows[0]) if rows else None


async def find_running(svc: Services, tenant: ScopeRef, active_key: str) -> Job | None:
    rows = await svc.db.scoped(tenant).read(q.FIND_RUNNING_JOB, {"active_key": active_key})
    return job_from(rows[0]) if rows else None


async def finish(svc: Services, tenant: ScopeRef, job_id: str) -> Receipt:
    params = {"id": job_id, "done": DONE, "now": svc.clock()}
    [row] = await svc.db.scoped(tenant).write(q.FINISH_JOB, params)
    return job_from(row).receipt


async def list_jobs(
    svc: Services, tenant: ScopeRef, limit: int, before: tuple[datetime, str] | None
) -> list[Receipt]:
    params: dict[str, Any] = {
        "limit": limit,
        "before": before[1] if before else None,
        "before_at": before[0] if before else None,
    }
    rows = await svc.db.scoped(tenant).read(q.LIST_JOBS, params)
    return [job_from(r).receipt for r in rows]


# -- the start-up journal -------------------------------------------------------------------


def journal_dir(svc: Services) -> Path:
    return svc.settings.home / "erasures"


def journal_add(svc: Services, tenant_id: str, job_id: str) -> None:
    root = journal_dir(svc)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = root / f"{job_id}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"tenant_id": tenant_id, "job_id": job_id}))
    os.replace(tmp, path)


def journal_remove(svc: Services, job_id: str) -> None:
    (journal_dir(svc) / f"{job_id}.json").unlink(missing_ok=True)


def journal_entries(svc: Services) -> list[tuple[str, str]]:
    """(tenant, job id) of every job this host left running."""
    root = journal_dir(svc)
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.iterdir()):
        if not _JOURNAL_NAME.match(path.name):
            continue
        try:
            entry = json.loads(path.read_text())
            found.append((str(entry["tenant_id"]), str(entry["job_id"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found
