"""PostgreSQL's errors mapped to the error tree by SQLSTATE (``sqlmem.postgres.errors``), the
same codes and details as the SQLite backend gives. Pure: the errors are built, not raised by
a server."""

from __future__ import annotations

import psycopg
import psycopg.errors as pe
import pytest

from palimpsest.errors import (
    Conflict,
    ErrorCode,
    InvalidArgument,
    PalimpsestError,
    QuotaExceeded,
    Unavailable,
)
from palimpsest.sqlmem.core.failure import Failure
from palimpsest.sqlmem.postgres.admin import TEMP_FILES, TOO_BIG
from palimpsest.sqlmem.postgres.errors import translate

FAILURE = Failure(
    denied=None,
    statement=2,
    elapsed_ms=310,
    timeout_ms=300,
    quota_bytes=0,
    current_bytes=None,
    max_value_bytes=4096,
)


def of(sqlstate: str, message: str = "boom") -> psycopg.Error:
    return pe.lookup(sqlstate)(message)


def test_a_statement_timeout_is_the_time_limit_with_its_figures() -> None:
    got = translate(of("57014"), FAILURE)
    assert isinstance(got, QuotaExceeded)
    assert got.details == {
        "limit": "statementTimeoutMs",
        "timeoutMs": 300,
        "elapsedMs": 310,
        "statement": 2,
    }
    assert "statement timeout of 300 ms exceeded; stopped after 310 ms" in got.message


def server_code(sqlstate: str) -> psycopg.Error:
    """An error with a code of the server's own (no class in psycopg), as the server sends it."""
    error = psycopg.Error("too big")
    error.sqlstate = sqlstate
    return error


@pytest.mark.parametrize("error", [server_code(TOO_BIG), of("54000")])
def test_a_value_too_big_names_the_value_cap(error: psycopg.Error) -> None:
    got = translate(error, FAILURE)
    assert isinstance(got, QuotaExceeded)
    assert got.details["limit"] == "sqlMaxValueBytes"
    assert got.details["maxValueBytes"] == 4096
    assert got.details["statement"] == 2


def test_the_temp_file_limit_is_a_limit_not_a_busy_server() -> None:
    got = translate(of("53400"), FAILURE)
    assert isinstance(got, QuotaExceeded)
    assert got.details["limit"] == "sqlTempFileBytes"
    assert got.details["tempFileLimit"] == TEMP_FILES


@pytest.mark.parametrize(
    ("sqlstate", "kind", "words"),
    [
        ("42501", InvalidArgument, "statement refused by PostgreSQL: boom (PostgreSQL privileges)"),
        ("25006", InvalidArgument, "sqlQuery is read-only"),
        ("23505", Conflict, "constraint failed: boom"),
        ("23503", Conflict, "constraint failed: boom"),
        ("40001", Unavailable, "busy or restarting; retry"),
        ("40P01", Unavailable, "busy or restarting; retry"),
        ("08006", Unavailable, "busy or restarting; retry"),
        ("53300", Unavailable, "busy or restarting; retry"),
        ("XX000", Unavailable, "busy or restarting; retry"),
        ("42P01", InvalidArgument, "no such table (PostgreSQL: boom)"),
        ("42601", InvalidArgument, "PostgreSQL: boom"),
        ("22012", InvalidArgument, "PostgreSQL: boom"),
    ],
)
def test_each_sqlstate_class_maps_to_its_code(
    sqlstate: str, kind: type[PalimpsestError], words: str
) -> None:
    got = translate(of(sqlstate), FAILURE)
    assert type(got) is kind
    assert words in got.message
    assert got.details["statement"] == 2


def test_a_lost_connection_without_a_sqlstate_is_unavailable() -> None:
    got = translate(psycopg.OperationalError("server closed the connection"), FAILURE)
    assert got.code is ErrorCode.UNAVAILABLE
    assert "connection to the SQL database was lost" in got.message


def test_an_error_without_a_sqlstate_answers_with_the_one_it_hides() -> None:
    # Leaving pipeline mode after a timeout fails again with no SQLSTATE; the timeout counts.
    try:
        try:
            raise of("57014")
        except psycopg.Error:
            raise psycopg.OperationalError("pipeline aborted") from None
    except psycopg.Error as outer:
        got = translate(outer, FAILURE)
    assert got.details["limit"] == "statementTimeoutMs"


def test_only_the_first_line_of_the_message_is_given() -> None:
    got = translate(of("42601", "syntax error at end\nLINE 1: SELECT"), FAILURE)
    assert got.message == "PostgreSQL: syntax error at end"
