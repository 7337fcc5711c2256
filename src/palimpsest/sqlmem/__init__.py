"""SQL Memory: a private relational database per scope owner (docs/spec.md, Planes)."""

from typing import TYPE_CHECKING

from palimpsest.sqlmem.core.base import DatabaseInfo, ExecResult, QueryResult, SqlStore, Statement

if TYPE_CHECKING:
    from palimpsest.sqlmem.sqlite.store import SqliteStore

__all__ = ["DatabaseInfo", "ExecResult", "QueryResult", "SqlStore", "SqliteStore", "Statement"]


def __getattr__(name: str) -> object:
    # Imported on first use: SQLite's worker processes import this package but never the
    # store (nor the validator's parser), so a replacement worker starts fast.
    if name == "SqliteStore":
        from palimpsest.sqlmem.sqlite.store import SqliteStore

        return SqliteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
