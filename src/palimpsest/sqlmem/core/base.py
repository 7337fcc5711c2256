"""The SQL Memory store interface. SQLite (``sqlite/store.py``) is the embedded default;
PostgreSQL (``postgres/store.py``: a schema and a login role per scope, shared by API
replicas) implements the same Protocol.

Each backend validates statements in its own dialect, so the interface takes raw text.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from palimpsest.identity import Scope, ScopeRef


@dataclass(frozen=True, slots=True)
class SqlStatement:
    """One statement of a SQL Memory batch, in the backend's dialect (apart from the Cypher
    ``Statement`` of ``cypher/``)."""

    sql: str
    args: Any = None  # JSON: a list (positional) or an object (named)


@dataclass(frozen=True, slots=True)
class QueryResult:
    columns: list[str]
    rows: list[list[Any]]  # JSON-safe values (see codec.py)
    truncated: bool
    # The limit that stopped the rows: "sqlMaxRows" or "sqlMaxResultBytes"; None when whole.
    truncated_by: str | None = None


@dataclass(frozen=True, slots=True)
class ExecResult:
    rows_affected: int
    last_insert_id: int | None  # only for INSERT / REPLACE


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    key: str
    # None when the owner record is missing (a file not created by this server).
    tenant_id: str | None
    scope: Scope | None
    owner_id: str | None
    bytes: int
    modified_at: datetime


class SqlStore(Protocol):
    async def query(self, ref: ScopeRef, sql: str, args: Any) -> QueryResult:
        """Run one read-only statement in the scope's database."""
        ...

    async def execute(self, ref: ScopeRef, batch: Sequence[SqlStatement]) -> list[ExecResult]:
        """Run DDL/DML statements atomically: all of them, or (on any error) none."""
        ...

    async def databases(self) -> list[DatabaseInfo]:
        """Every scope database, with its owner and size (callers filter by visibility)."""
        ...

    async def erase(self, key: str) -> int | None:
        """Delete one scope's database; the bytes freed, or None when there was none."""
        ...

    async def dump(self, key: str) -> list[dict[str, Any]]:
        """One scope's schema and rows as export records (``sqlmem.dump``); [] when none."""
        ...

    async def ping(self) -> None:
        """Raise ``Unavailable`` when the backend cannot serve (readiness; never a secret)."""
        ...

    async def warm(self) -> None:
        """Start what the first statement would wait for (start-up's warm-up)."""
        ...

    def close(self) -> None: ...


# The old name, for one release: it clashed with cypher's ``Statement``.
DEPRECATED_STATEMENT = (
    "palimpsest.sqlmem.Statement is deprecated: use palimpsest.sqlmem.SqlStatement (the same class)"
)
if TYPE_CHECKING:
    Statement = SqlStatement


def __getattr__(name: str) -> object:
    if name == "Statement":
        warnings.warn(DEPRECATED_STATEMENT, DeprecationWarning, stacklevel=2)
        return SqlStatement
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
