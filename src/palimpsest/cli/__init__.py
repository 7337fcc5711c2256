"""The ``palimpsest`` command. Each module registers its subcommands on the groups in ``apps``."""

from __future__ import annotations

from palimpsest.cli import bench, people, server
from palimpsest.cli.apps import app

__all__ = ["app", "bench", "main", "people", "server"]


def main() -> None:
    app()
