"""The ``palimpsest`` command. ``main`` is its entry point: the common reading looks
(``memory get``, ``memory history``, ``memory search``, ``usage``) given in their plain forms
run the short way (``cli/shortcut.py``: without typer, which most of their start-up was);
every other command line goes to the whole command on typer (``cli/registry.py``), where each
module registers its subcommands and installed distributions add theirs through the
``palimpsest.cli`` entry point group (the bench's ``bench`` and ``eval``).

Importing this package loads neither typer nor any command module: the names below that
need them (``app``, ``cli_app``, ``run_command``, the command modules) load on first use.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from palimpsest.cli.failures import expected_failure

if TYPE_CHECKING:
    from palimpsest.cli import backups, context, cycle, documents, people, portability, server
    from palimpsest.cli.registry import PLUGINS, app, builtin_commands, cli_app, run_command

__all__ = [
    "PLUGINS",
    "app",
    "backups",
    "builtin_commands",
    "cli_app",
    "context",
    "cycle",
    "documents",
    "expected_failure",
    "main",
    "people",
    "portability",
    "run_command",
    "server",
]
_ON_TYPER = frozenset(__all__) - {"expected_failure", "main"}


def __getattr__(name: str) -> Any:
    if name in _ON_TYPER:
        return getattr(importlib.import_module("palimpsest.cli.registry"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    from palimpsest.cli import shortcut

    code = shortcut.run(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from palimpsest.cli import registry

    registry.main()
