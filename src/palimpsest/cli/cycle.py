"""The memory cycle: consolidator workers, and the benchmarks of harvest and consolidation."""

from __future__ import annotations

from typing import Annotated

import typer

from palimpsest.cli.apps import app, bench_app, err, print_json
from palimpsest.config import Settings


@app.command()
def consolidate(
    once: Annotated[bool, typer.Option(help="Drain what is leasable now, then exit.")] = False,
    workers: Annotated[int, typer.Option(min=1, max=64, help="Worker loops here.")] = 1,
    lease_seconds: Annotated[
        float | None,
        typer.Option(min=1, help="Lease length (default PALIMPSEST_CONSOLIDATE_LEASE_SECONDS)."),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Serve the workers' counters on this port."),
    ] = None,
) -> None:
    """Run consolidator workers: turn harvested spans into memory. Prints a JSON summary."""
    import asyncio

    from palimpsest import consolidator, logs
    from palimpsest.app import metrics_listener

    settings = Settings()
    logs.configure(settings.log_level)
    result = consolidator.run(
        settings, workers=workers, once=once, lease_seconds=lease_seconds, say=err
    )
    with metrics_listener(settings.model_copy(update={"metrics_port": metrics_port})):
        print_json(asyncio.run(result))


@bench_app.command("consolidate-crash")
def bench_consolidate_crash(
    kills: Annotated[int, typer.Option(min=0, help="SIGKILLs of workers holding a lease.")] = 20,
    spans: Annotated[int, typer.Option(min=1, help="Spans to harvest and drain.")] = 3000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 3,
    lease_seconds: Annotated[float, typer.Option(min=1, help="Lease length.")] = 5.0,
) -> None:
    """Drain a queue while killing workers mid-lease: {accepted, consolidated, lost, ...}."""
    import asyncio

    from palimpsest_bench import cycle_bench

    run = cycle_bench.run_crash(
        Settings(), spans=spans, kills=kills, workers=workers, lease_seconds=lease_seconds, say=err
    )
    print_json(asyncio.run(run))


@bench_app.command("harvest")
def bench_harvest(
    spans: Annotated[int, typer.Option(min=1, help="Spans to harvest.")] = 2000,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Spans per harvest call.")] = 50,
) -> None:
    """Harvest spans/s through GraphQL; consolidation against embedding-only spans/s."""
    import asyncio

    from palimpsest_bench import cycle_bench

    print_json(asyncio.run(cycle_bench.run_harvest(Settings(), spans, batch, say=err)))
