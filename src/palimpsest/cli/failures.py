"""What the user is told when a command fails: one line for a failure they can act on."""

from __future__ import annotations

import sys

__all__ = ["expected_failure"]


def expected_failure(e: BaseException) -> str | None:
    """One line for a failure the user can act on; None for a bug (keep its traceback)."""
    from palimpsest.errors import PalimpsestError

    if isinstance(e, PalimpsestError):
        return e.message
    if isinstance(e, OSError):
        return str(e)
    if "pydantic" not in sys.modules:  # nothing could have raised its ValidationError
        return None
    from pydantic import ValidationError

    if isinstance(e, ValidationError):
        from palimpsest.config import variable_of

        problems = []
        for err in e.errors():
            name = variable_of(err["loc"])
            text = err["msg"].removeprefix("Value error, ")
            problems.append(f"{name}: {text}" if name else text)
        return f"invalid settings: {'; '.join(problems)}"
    return None
