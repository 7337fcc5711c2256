"""The bench's commands: ``palimpsest bench ...`` and ``palimpsest eval ...`` through the
product's ``palimpsest.cli`` entry point, or ``palimpsest-bench ...`` on their own."""

from __future__ import annotations

import typer

from palimpsest_bench.commands import benches, evals, peer, postings, scale
from palimpsest_bench.commands.groups import bench_app, eval_app

__all__ = [
    "bench_app",
    "benches",
    "eval_app",
    "evals",
    "main",
    "peer",
    "postings",
    "register",
    "scale",
]


def register(app: typer.Typer) -> None:
    """Mount the groups on the product's ``palimpsest`` command."""
    app.add_typer(bench_app, name="bench")
    app.add_typer(eval_app, name="eval")


def main() -> None:
    """``palimpsest-bench``: the benchmarks at the top level, the evaluations under ``eval``."""
    from palimpsest.cli import run_command

    standalone = typer.Typer(no_args_is_help=True, add_completion=False, help=bench_app.info.help)
    for command in bench_app.registered_commands:
        standalone.registered_commands.append(command)
    standalone.add_typer(eval_app, name="eval")
    run_command(standalone)
