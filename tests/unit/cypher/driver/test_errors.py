"""Driver errors become the error tree's by their code; no message text (which may quote
parameters) reaches the error or the log."""

from __future__ import annotations

import logging

import pytest
from neo4j.exceptions import (
    ConnectionPoolError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from palimpsest.cypher.driver.errors import translated
from palimpsest.errors import (
    Conflict,
    DatabaseFailure,
    InvalidArgument,
    PalimpsestError,
    Unavailable,
)

SECRET = "the user's diary entry"


def _server(code: str) -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message=f"failed near '{SECRET}'")


@pytest.mark.parametrize(
    ("error", "kind", "details"),
    [
        (
            _server("Neo.ClientError.Schema.ConstraintValidationFailed"),
            Conflict,
            {"driverCode": "Neo.ClientError.Schema.ConstraintValidationFailed"},
        ),
        (ServiceUnavailable(SECRET), Unavailable, {}),
        (SessionExpired(SECRET), Unavailable, {}),
        (
            _server("Neo.TransientError.Transaction.BookmarkTimeout"),
            Unavailable,
            {"limit": "bookmarkWait"},
        ),
        (_server("Neo.ClientError.Transaction.InvalidBookmark"), InvalidArgument, {}),
        (
            _server("Neo.TransientError.Transaction.DeadlockDetected"),
            Unavailable,
            {"driverCode": "Neo.TransientError.Transaction.DeadlockDetected"},
        ),
        (
            _server("Neo.ClientError.Statement.SyntaxError"),
            DatabaseFailure,
            {"driverCode": "Neo.ClientError.Statement.SyntaxError"},
        ),
        (ConnectionPoolError(SECRET), DatabaseFailure, {"driverCode": "ConnectionPoolError"}),
        (
            _server("Neo.ClientError.Procedure.ProcedureNotFound"),
            Unavailable,
            {"driverCode": "Neo.ClientError.Procedure.ProcedureNotFound"},
        ),
        (
            _server("Neo.ClientError.Procedure.ProcedureCallFailed"),
            DatabaseFailure,
            {"driverCode": "Neo.ClientError.Procedure.ProcedureCallFailed"},
        ),
    ],
)
def test_each_driver_error_maps_by_code_and_never_carries_its_message(
    error: Neo4jError,
    kind: type[PalimpsestError],
    details: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    mapped = translated(error)
    assert type(mapped) is kind
    assert mapped.details == details
    assert SECRET not in mapped.message
    assert SECRET not in caplog.text


def test_a_bookmark_timeout_tells_the_caller_how_to_go_on() -> None:
    mapped = translated(_server("Neo.TransientError.Transaction.BookmarkTimeout"))
    assert "drop the header" in mapped.message
