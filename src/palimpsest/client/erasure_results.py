"""The results of erasures: receipts with their counts, a person erasure's authored rows, and
the tenant's erasure policy."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from palimpsest.client.enums import (
    AuthoredPolicy,
    ErasureKind,
    ErasureStatus,
    RetentionWindow,
    Scope,
)


@dataclass(frozen=True, slots=True)
class AuthoredCounts:
    """Rows a person wrote in shared scopes, per plane."""

    entries: int
    note_versions: int
    documents: int
    chunks: int
    chunk_revisions: int
    document_revisions: int
    entities: int
    facts: int


@dataclass(frozen=True, slots=True)
class AuthoredErasure:
    """A person erasure's rows written outside the person's own scope: deleted or anonymised
    by the tenant's policy, and the rows nobody can attribute."""

    policy: AuthoredPolicy
    deleted: AuthoredCounts
    anonymised: AuthoredCounts
    unattributed: int


@dataclass(frozen=True, slots=True)
class ErasurePolicy:
    """The tenant's erasure policy."""

    authored: AuthoredPolicy
    updated_at: datetime | None


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """The tenant's retention windows in effect, in seconds (0: kept for ever), and which of
    them the tenant set rather than the server's settings."""

    versions_seconds: int
    tombstones_seconds: int
    done_spans_seconds: int
    overridden: list[RetentionWindow]


@dataclass(frozen=True, slots=True)
class ErasureCounts:
    """What an erasure removed, per plane, over all its attempts."""

    entries: int
    documents: int
    chunks: int
    entities: int
    facts: int
    fact_sources: int
    sql_databases: int
    sql_bytes: int
    spans: int
    chunk_revisions: int
    document_revisions: int
    note_versions: int


@dataclass(frozen=True, slots=True)
class ErasureReceipt:
    """The receipt of an erasure, also its audit record: counts, who asked and when; never what was
    erased.
    """

    id: str
    kind: ErasureKind
    scope: Scope
    status: ErasureStatus
    requested_by: str
    requested_at: datetime
    finished_at: datetime | None
    attempts: int
    removed: ErasureCounts
    matched: bool
    authored: AuthoredErasure | None = None


@dataclass(frozen=True, slots=True)
class ErasureReceiptPage:
    """One page of a list, in the list's stable order."""

    items: list[ErasureReceipt]
    cursor: str | None
    has_more: bool
