"""Driver exceptions as the error tree's errors: by code, never by message text.

A driver message may quote parameters (memory contents), so only its code reaches the
error's details and the log."""

from __future__ import annotations

import logging

from neo4j.exceptions import (
    ConstraintError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from palimpsest.errors import (
    Conflict,
    DatabaseFailure,
    InvalidArgument,
    PalimpsestError,
    Unavailable,
)

log = logging.getLogger(__name__)

INVALID_BOOKMARK = "Neo.ClientError.Transaction.InvalidBookmark"
BOOKMARK_TIMEOUT = "Neo.TransientError.Transaction.BookmarkTimeout"
# Our extension's procedures (cypher/extension.py): gone since start-up (a server restarted
# without the plugin), or failed inside.
PROCEDURE_NOT_FOUND = "Neo.ClientError.Procedure.ProcedureNotFound"
PROCEDURE_FAILED = "Neo.ClientError.Procedure.ProcedureCallFailed"


def translated(e: Neo4jError | DriverError) -> PalimpsestError:
    """The error tree's account of a driver error: by code, never by message text (the
    message may quote parameters); the driver's code goes into the details."""
    if isinstance(e, ConstraintError):
        return Conflict("the write collides with an existing row", driverCode=e.code)
    if isinstance(e, ServiceUnavailable | SessionExpired):
        return Unavailable("the database is not reachable; retry shortly")
    if isinstance(e, Neo4jError):
        if e.code == BOOKMARK_TIMEOUT:
            return unreached()
        if e.code == INVALID_BOOKMARK:
            return InvalidArgument(
                "x-palimpsest-bookmark names a transaction this database does not know"
            )
        log.error("neo4j error code=%s", e.code)
        if e.code == PROCEDURE_NOT_FOUND:
            return Unavailable(
                "the database lacks a procedure this server was started with (Palimpsest's "
                "extension); restart the server to choose its search engine again",
                driverCode=e.code,
            )
        if e.code == PROCEDURE_FAILED:
            return DatabaseFailure("a database procedure failed", driverCode=e.code)
        if e.is_retryable():
            return Unavailable("the database is busy; retry shortly", driverCode=e.code)
        return DatabaseFailure("the database failed the operation", driverCode=e.code)
    log.error("neo4j driver error %s", type(e).__name__)
    return DatabaseFailure("the database failed the operation", driverCode=type(e).__name__)


def unreached() -> Unavailable:
    return Unavailable(
        "the database has not reached the state x-palimpsest-bookmark names; retry later, "
        "or drop the header to read what the database has now",
        limit="bookmarkWait",
    )


def code_of(error: Neo4jError | DriverError) -> str | None:
    return error.code if isinstance(error, Neo4jError) else None


def database_code(error: PalimpsestError) -> str | None:
    """The database's own code behind a translated error (``Neo.ClientError.Statement.
    SyntaxError``): it says what was wrong without the statement's text or values."""
    cause = error.__cause__
    return code_of(cause) if isinstance(cause, Neo4jError | DriverError) else None
