"""``bench peer-latency``: Palimpsest's ``search`` beside neo4j-graphrag's ``HybridRetriever``
(the optional ``peer`` extra of the bench)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from palimpsest.cli.apps import err, print_json
from palimpsest.config import Settings
from palimpsest_bench.commands.groups import bench_app


@bench_app.command("peer-latency")
def bench_peer_latency(
    data: Annotated[
        Path | None,
        typer.Option(help="LoCoMo data folder: its 680-turn conversation is the scope."),
    ] = None,
    turns: Annotated[
        int | None,
        typer.Option(min=1, help="A synthetic scope of this many turns instead of LoCoMo."),
    ] = None,
    queries: Annotated[int, typer.Option(min=1, help="Measured query pairs.")] = 200,
    warmup: Annotated[int, typer.Option(min=0, help="Unmeasured pairs first.")] = 20,
    compare_one: Annotated[
        bool,
        typer.Option(
            help="Also ask each query with the one-statement search off (procedure engine)."
        ),
    ] = False,
) -> None:
    """`search` against neo4j-graphrag's HybridRetriever on one scope: the same Neo4j and
    model, embedding included, queries interleaved; both p50/p95 and the ratio (ms)."""
    try:
        from palimpsest_bench import peer_latency
    except ImportError as exc:  # the optional extra is not installed
        err(f"peer-latency needs the bench's `peer` extra (neo4j-graphrag): {exc}")
        raise typer.Exit(2) from exc
    if (data is None) == (turns is None):
        err("give exactly one of --data and --turns")
        raise typer.Exit(2)
    run = peer_latency.run_peer(
        Settings(), data, turns, queries, warmup, say=err, compare_one=compare_one
    )
    print_json(asyncio.run(run))
