"""How long minted run tokens live. A run token cannot be revoked on its own (only a new
signing secret ends it, and every other token with it), so the tokens this server mints for
development and for long-lived clients are bounded."""

from __future__ import annotations

from datetime import UTC, datetime

DEFAULT_TTL_SECONDS = 3600
MAX_MINTED_TTL_SECONDS = 90 * 24 * 3600

_UNITS = ((24 * 3600, "day"), (3600, "hour"), (60, "minute"), (1, "second"))


def lifetime(seconds: int, expires_at: int) -> str:
    """``1 hour, until 2026-12-04 19:00:00 UTC``: the lifetime in the largest whole unit."""
    count, unit = next((seconds // size, name) for size, name in _UNITS if seconds % size == 0)
    until = datetime.fromtimestamp(expires_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{count} {unit}{'' if count == 1 else 's'}, until {until}"
