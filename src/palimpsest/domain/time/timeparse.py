"""Timestamps from the wire: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or full RFC 3339.

A partial date means its first instant in UTC (``2020`` is 2020-01-01T00:00:00Z), so a
validity interval written in years, ``[2019, 2021)``, reads as it is written. A timestamp
without an offset is refused rather than guessed, and anything unparseable is an
``INVALID_ARGUMENT``, never silently dropped.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from palimpsest.errors import InvalidArgument

# ASCII digits only (``\d`` would also take other scripts' digits).
_YEAR = re.compile(r"^(\d{4})$", re.ASCII)
_MONTH = re.compile(r"^(\d{4})-(\d{2})$", re.ASCII)
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$", re.ASCII)
_FULL = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$",
    re.ASCII,
)


def parse_time(value: str, field: str) -> datetime:
    """Parse one wire timestamp; ``field`` names the argument in the error."""
    text = value.strip()
    try:
        if m := _YEAR.match(text):
            return datetime(int(m[1]), 1, 1, tzinfo=UTC)
        if m := _MONTH.match(text):
            return datetime(int(m[1]), int(m[2]), 1, tzinfo=UTC)
        if m := _DAY.match(text):
            return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=UTC)
        if _FULL.match(text):
            # fromisoformat takes at most microseconds; trim nanosecond fractions.
            trimmed = re.sub(r"(\.\d{6})\d+", r"\1", text.replace("z", "Z"))
            return datetime.fromisoformat(trimmed).astimezone(UTC)
    except ValueError as e:
        raise InvalidArgument(f"{field}: {_shown(value)} is not a valid date") from e
    except OverflowError as e:
        # e.g. 9999-12-31T23:59:59-23:59 is a valid text whose UTC instant is past year 9999.
        raise InvalidArgument(
            f"{field}: {_shown(value)} is outside 0001-01-01 to 9999-12-31 in UTC"
        ) from e
    raise InvalidArgument(
        f"{field}: {_shown(value)} is not YYYY, YYYY-MM, YYYY-MM-DD or an RFC 3339 timestamp "
        "with offset"
    )


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 40 else repr(value[:40]) + "..."


def parse_optional(value: str | None, field: str) -> datetime | None:
    return None if value is None else parse_time(value, field)


def check_interval(valid_at: datetime | None, invalid_at: datetime | None) -> None:
    if valid_at is not None and invalid_at is not None and invalid_at <= valid_at:
        raise InvalidArgument("invalidAt must be after validAt (intervals are half-open)")
