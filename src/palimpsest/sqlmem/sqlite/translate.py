"""SQLite exceptions -> the error tree, matched by result code, never by message text."""

from __future__ import annotations

import sqlite3

from palimpsest.errors import (
    Conflict,
    InvalidArgument,
    PalimpsestError,
    QuotaExceeded,
    Unavailable,
)
from palimpsest.sqlmem.core.failure import Failure, timed_out

__all__ = ["Failure", "timed_out", "translate"]

# SQLite's own message is useful to the caller for these (syntax, missing table, bindings).
_CALLER_ERRORS = {sqlite3.SQLITE_ERROR, sqlite3.SQLITE_RANGE, sqlite3.SQLITE_MISMATCH}


def translate(e: sqlite3.Error, f: Failure) -> PalimpsestError:
    code = getattr(e, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    at = {"statement": f.statement}
    # A denial always fails the prepare, and SQLite reports a denied function as a plain
    # SQLITE_ERROR; so any recorded denial is the cause.
    if f.denied is not None or primary == sqlite3.SQLITE_AUTH:
        reason = f"{f.denied or 'the statement'} is not allowed"
        return InvalidArgument(
            f"statement refused by the SQLite authorizer: {reason}", reason=reason, **at
        )
    if primary == sqlite3.SQLITE_INTERRUPT:
        return timed_out(f.timeout_ms, f.elapsed_ms, f.statement)
    if primary == sqlite3.SQLITE_FULL and f.quota_bytes:
        return QuotaExceeded(
            f"SQL database quota of {f.quota_bytes} bytes would be exceeded "
            f"(current={f.current_bytes}); the batch was rolled back",
            limit="sqlMaxDbBytes",
            quota=f.quota_bytes,
            current=f.current_bytes,
            **at,
        )
    if primary == sqlite3.SQLITE_TOOBIG:
        return QuotaExceeded(
            f"a value or row would exceed {f.max_value_bytes} bytes, the limit of one value "
            "(read a long value in parts with substr())",
            limit="sqlMaxValueBytes",
            maxValueBytes=f.max_value_bytes,
            **at,
        )
    if primary == sqlite3.SQLITE_CONSTRAINT:
        return Conflict(f"constraint failed: {e}", **at)
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return Unavailable("the SQL database is busy; retry", **at)
    if primary is None or primary in _CALLER_ERRORS:
        # Python-level errors (bindings, a second statement) carry no SQLite code.
        return InvalidArgument(f"SQLite: {e}", **at)
    return Unavailable(f"the SQL database failed ({e.sqlite_errorname})", **at)
