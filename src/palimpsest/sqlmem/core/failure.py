"""What a store knew when a statement failed, and the time limit's error: both backends."""

from __future__ import annotations

from dataclasses import dataclass

from palimpsest.errors import QuotaExceeded


@dataclass(frozen=True, slots=True)
class Failure:
    """What the store knew when a statement failed."""

    denied: str | None  # what the authorizer refused, if it did
    statement: int  # index in the batch (0 for a query)
    elapsed_ms: int
    timeout_ms: int
    quota_bytes: int
    current_bytes: int | None
    max_value_bytes: int


def timed_out(timeout_ms: int, elapsed_ms: int, statement: int) -> QuotaExceeded:
    """The time limit, whether SQLite stopped the statement or its worker was killed."""
    return QuotaExceeded(
        f"statement timeout of {timeout_ms} ms exceeded; stopped after {elapsed_ms} ms "
        "and nothing was changed",
        limit="statementTimeoutMs",
        timeoutMs=timeout_ms,
        elapsedMs=elapsed_ms,
        statement=statement,
    )
