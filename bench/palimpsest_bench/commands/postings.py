"""``bench postings-sim``: rows read by the full-text leg today against a block-max MaxScore
over impact-ordered postings, on the growth bench's scopes, in Python (no server)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from palimpsest.cli.apps import err, print_json
from palimpsest_bench.commands.groups import bench_app


@bench_app.command("postings-sim")
def bench_postings_sim(
    sizes: Annotated[
        str, typer.Option(help="Scope sizes, comma-separated (1000, 10k, 1M).")
    ] = "1k,10k,100k,1M",
    queries: Annotated[
        int, typer.Option(min=1, help="Queries per size: the growth run's measured ones.")
    ] = 150,
    tenant: Annotated[
        str,
        typer.Option(help="The growth dataset's tenant (its texts depend on it)."),
    ] = "bench-growth-synth",
) -> None:
    """Per size: rows holding the rarest query term, rows the product's full-text leg reads,
    and rows a block-max MaxScore over impact blocks reads, each pool checked exact."""
    from palimpsest_bench import postings_sim, recall_growth

    try:
        chosen = recall_growth.parse_sizes(sizes)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--sizes") from exc
    # The growth run warms up on its first min(30, queries) queries, then measures the rest.
    run = postings_sim.run_sim(chosen, queries, min(30, queries), tenant, say=err)
    print_json(asyncio.run(run))
