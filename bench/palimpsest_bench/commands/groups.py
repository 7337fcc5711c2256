"""The ``bench`` and ``eval`` command groups, which the product's CLI mounts when this
distribution is installed (entry point ``palimpsest.cli``)."""

from __future__ import annotations

import typer

bench_app = typer.Typer(
    no_args_is_help=True, help="Benchmarks: one JSON object on stdout, progress on stderr."
)
eval_app = typer.Typer(
    no_args_is_help=True,
    help="Evaluations on a data folder: one JSON object on stdout, progress on stderr.",
)
