"""The whole ``palimpsest`` command, on typer: each module registers its subcommands on the
groups in ``apps``; installed distributions add theirs through the ``palimpsest.cli`` entry
point group (the bench's ``bench`` and ``eval``). ``palimpsest.cli.main`` comes here for every
command line the short way in (``cli/shortcut.py``) does not take."""

from __future__ import annotations

import sys

import typer

from palimpsest.cli import backups, context, cycle, documents, people, portability, server
from palimpsest.cli.apps import app, err
from palimpsest.cli.failures import expected_failure

__all__ = [
    "PLUGINS",
    "app",
    "backups",
    "builtin_commands",
    "cli_app",
    "context",
    "cycle",
    "documents",
    "main",
    "people",
    "portability",
    "run_command",
    "server",
]
PLUGINS = "palimpsest.cli"
_mounted: set[str] = set()


def cli_app() -> typer.Typer:
    """The ``palimpsest`` command with every installed distribution's commands mounted."""
    from importlib.metadata import entry_points

    for plugin in entry_points(group=PLUGINS):
        if plugin.name not in _mounted:
            plugin.load()(app)
            _mounted.add(plugin.name)
    return app


def main() -> None:
    # A built-in command (or --version) runs without the plugins: scanning the installed
    # distributions and importing theirs is start-up a quick look would pay for nothing. The
    # full help and a plugin's own command mount them.
    args = sys.argv[1:]
    words = [w for w in args if not w.startswith("-")]
    builtin = words[0] in builtin_commands() if words else bool(args) and "--help" not in args
    run_command(app if builtin else cli_app())


def builtin_commands() -> frozenset[str]:
    return _BUILTIN


def _registered() -> frozenset[str]:
    groups = {g.name or "" for g in app.registered_groups}
    return frozenset(groups) | {
        c.name or (c.callback.__name__.replace("_", "-") if c.callback else "")
        for c in app.registered_commands
    }


# Taken when this module is imported, before any plugin is mounted on ``app``.
_BUILTIN = _registered()


def run_command(command: typer.Typer) -> None:
    """Run ``command``; an expected failure prints one line and exits 1, never a traceback."""
    try:
        command()
    except KeyboardInterrupt:
        err("palimpsest: interrupted")
        sys.exit(130)
    except Exception as e:
        message = expected_failure(e)
        if message is None:
            raise
        err(f"palimpsest: {message}")
        sys.exit(1)
