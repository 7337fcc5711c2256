"""SQL Memory: a private relational database per scope owner (docs/spec.md, Planes)."""

from palimpsest.sqlmem.base import DatabaseInfo, ExecResult, QueryResult, SqlStore, Statement
from palimpsest.sqlmem.store import SqliteStore

__all__ = ["DatabaseInfo", "ExecResult", "QueryResult", "SqlStore", "SqliteStore", "Statement"]
