"""The one error tree. Every refusal the API gives is one of these, matched by code.

Messages say what went wrong and what to do next. They never echo memory contents,
tokens or query parameters back into logs; the message is for the caller only.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    CONFLICT = "CONFLICT"
    QUOTA_EXCEEDED = "QUOTA_EXCEEDED"
    UNAVAILABLE = "UNAVAILABLE"
    INTERNAL = "INTERNAL"


class PalimpsestError(Exception):
    """Base of every error the server raises on purpose."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        # Small, non-sensitive facts for the caller (limits, counts, names of things).
        self.details = details


class Unauthenticated(PalimpsestError):
    code = ErrorCode.UNAUTHENTICATED


class Forbidden(PalimpsestError):
    code = ErrorCode.FORBIDDEN


class NotFound(PalimpsestError):
    code = ErrorCode.NOT_FOUND


class InvalidArgument(PalimpsestError):
    code = ErrorCode.INVALID_ARGUMENT


class Conflict(PalimpsestError):
    code = ErrorCode.CONFLICT


class QuotaExceeded(PalimpsestError):
    code = ErrorCode.QUOTA_EXCEEDED


class Unavailable(PalimpsestError):
    code = ErrorCode.UNAVAILABLE


class DatabaseFailure(PalimpsestError):
    """The database failed an operation for a reason the caller cannot fix (a bug, or the
    server's own trouble); ``details["driverCode"]`` names the driver's code."""

    code = ErrorCode.INTERNAL
