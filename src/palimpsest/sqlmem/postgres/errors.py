"""PostgreSQL errors -> the error tree, matched by SQLSTATE, never by message text.

The codes and extensions are those of the SQLite backend (``sqlite/translate.py``), so a client sees
the same answer from either backend; only the wording after "PostgreSQL:" differs.
"""

from __future__ import annotations

import psycopg

from palimpsest.errors import (
    Conflict,
    InvalidArgument,
    PalimpsestError,
    QuotaExceeded,
    Unavailable,
)
from palimpsest.sqlmem.core.failure import Failure
from palimpsest.sqlmem.postgres.admin import TEMP_FILES, TOO_BIG

_TIMEOUT = "57014"  # query_canceled: statement_timeout (the store cancels nothing it reports)
_PRIVILEGE = "42501"
_READ_ONLY = "25006"
_UNDEFINED_TABLE = "42P01"
_TEMP_FILE_LIMIT = "53400"  # configuration_limit_exceeded: the role's temp_file_limit
_RETRY = {"40001", "40P01", "55P03", "57P01", "57P02", "57P03"}


def translate(e: psycopg.Error, f: Failure) -> PalimpsestError:
    if not e.sqlstate and isinstance(e.__context__, psycopg.Error) and e.__context__.sqlstate:
        # Leaving pipeline mode right after the server's error (a statement timeout that hits
        # before the rows) fails again without a SQLSTATE; the server's error is the answer.
        e = e.__context__
    state = e.sqlstate or ""
    at = {"statement": f.statement}
    message = _first_line(e)
    if state == TOO_BIG:
        return too_big(f.max_value_bytes, f.statement)
    if state == _TIMEOUT:
        return QuotaExceeded(
            f"statement timeout of {f.timeout_ms} ms exceeded; stopped after {f.elapsed_ms} ms "
            "and nothing was changed",
            limit="statementTimeoutMs",
            timeoutMs=f.timeout_ms,
            elapsedMs=f.elapsed_ms,
            **at,
        )
    if state == _PRIVILEGE:
        reason = f"{message} (PostgreSQL privileges)"
        return InvalidArgument(f"statement refused by PostgreSQL: {reason}", reason=reason, **at)
    if state == _READ_ONLY:
        reason = "sqlQuery is read-only (PostgreSQL read-only transaction)"
        return InvalidArgument(f"statement refused: {reason}", reason=reason, **at)
    if state.startswith("23"):
        return Conflict(f"constraint failed: {message}", **at)
    if state == _TEMP_FILE_LIMIT:
        # The same statement would fail again: a limit, not a busy server.
        return QuotaExceeded(
            f"the statement needed more than {TEMP_FILES} of temporary files (sorting or "
            "materialising too many rows); nothing was changed",
            limit="sqlTempFileBytes",
            tempFileLimit=TEMP_FILES,
            **at,
        )
    if state == "54000":
        return too_big(f.max_value_bytes, f.statement)
    if state in _RETRY or state.startswith(("08", "53", "58", "XX")):
        return Unavailable("the SQL database is busy or restarting; retry", **at)
    if state == _UNDEFINED_TABLE:
        return InvalidArgument(f"no such table (PostgreSQL: {message})", **at)
    if isinstance(e, psycopg.OperationalError) and not state:
        return Unavailable("the connection to the SQL database was lost; retry", **at)
    # Syntax, missing columns, bad casts, division by zero, wrong bindings: the caller's to fix.
    return InvalidArgument(f"PostgreSQL: {message}", **at)


def too_big(max_value_bytes: int, statement: int = 0) -> QuotaExceeded:
    return QuotaExceeded(
        f"a value or row would exceed {max_value_bytes} bytes, the limit of one value "
        "(read a long value in parts with substr())",
        limit="sqlMaxValueBytes",
        maxValueBytes=max_value_bytes,
        statement=statement,
    )


def _first_line(e: psycopg.Error) -> str:
    diag = e.diag.message_primary if e.sqlstate else None
    return (diag or str(e)).splitlines()[0] if (diag or str(e)) else type(e).__name__
