"""SQL Memory: a private relational database per scope owner (docs/spec.md, Planes)."""

import warnings
from typing import TYPE_CHECKING

from palimpsest.sqlmem.core.base import (
    DEPRECATED_STATEMENT,
    DatabaseInfo,
    ExecResult,
    QueryResult,
    SqlStatement,
    SqlStore,
)

if TYPE_CHECKING:
    from palimpsest.sqlmem.sqlite.store import SqliteStore

    Statement = SqlStatement  # deprecated (below)

__all__ = ["DatabaseInfo", "ExecResult", "QueryResult", "SqlStatement", "SqlStore", "SqliteStore"]


def __getattr__(name: str) -> object:
    # Imported on first use: SQLite's worker processes import this package but never the
    # store (nor the validator's parser), so a replacement worker starts fast.
    if name == "SqliteStore":
        from palimpsest.sqlmem.sqlite.store import SqliteStore

        return SqliteStore
    if name == "Statement":  # the old name, for one release (it clashed with cypher's)
        warnings.warn(DEPRECATED_STATEMENT, DeprecationWarning, stacklevel=2)
        return SqlStatement
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
