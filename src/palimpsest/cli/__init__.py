"""The ``palimpsest`` command. Each module registers its subcommands on the groups in ``apps``."""

from __future__ import annotations

import sys

from palimpsest.cli import bench, cycle, people, portability, server
from palimpsest.cli.apps import app, err

__all__ = ["app", "bench", "cycle", "expected_failure", "main", "people", "portability", "server"]


def main() -> None:
    """Run the command; an expected failure prints one line and exits 1, never a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        err("palimpsest: interrupted")
        sys.exit(130)
    except Exception as e:
        message = expected_failure(e)
        if message is None:
            raise
        err(f"palimpsest: {message}")
        sys.exit(1)


def expected_failure(e: BaseException) -> str | None:
    """One line for a failure the user can act on; None for a bug (keep its traceback)."""
    from neo4j.exceptions import DriverError, Neo4jError
    from pydantic import ValidationError

    from palimpsest.errors import PalimpsestError

    if isinstance(e, PalimpsestError):
        return e.message
    if isinstance(e, ValidationError):
        problems = []
        for err in e.errors():
            name = "_".join(str(p) for p in err["loc"]).upper()
            text = err["msg"].removeprefix("Value error, ")
            problems.append(f"PALIMPSEST_{name}: {text}" if name else text)
        return f"invalid settings: {'; '.join(problems)}"
    if isinstance(e, DriverError | Neo4jError):
        return f"neo4j: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    if isinstance(e, OSError):
        return str(e)
    return None
