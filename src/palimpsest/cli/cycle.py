"""The memory cycle: consolidator workers (their benchmarks are the bench distribution's)."""

from __future__ import annotations

from typing import Annotated

import typer

from palimpsest.cli.apps import app, err, load_settings, print_json


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

    from palimpsest import logs
    from palimpsest.app import metrics_listener
    from palimpsest.jobs import consolidator

    settings = load_settings()
    logs.configure(settings.log_level)
    result = consolidator.run(
        settings, workers=workers, once=once, lease_seconds=lease_seconds, say=err
    )
    with metrics_listener(settings.replace(metrics_port=metrics_port)):
        print_json(asyncio.run(result))


@app.command()
def sweep(
    once: Annotated[bool, typer.Option(help="Sweep every scope once, then exit.")] = False,
    tenant: Annotated[
        str | None, typer.Option(help="Sweep this tenant's scopes only (default: all).")
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Serve the sweeper's counters on this port."),
    ] = None,
) -> None:
    """Remove the past each tenant's retention policy no longer keeps (expired notes into the
    past, old versions and tombstones, finished queue spans). Prints a JSON summary."""
    import asyncio

    from palimpsest import logs
    from palimpsest.app import metrics_listener
    from palimpsest.jobs import sweeper

    settings = load_settings()
    logs.configure(settings.log_level)
    result = sweeper.run(settings, once=once, tenant=tenant, say=err)
    with metrics_listener(settings.replace(metrics_port=metrics_port)):
        print_json(asyncio.run(result))


@app.command()
def reembed(
    model: Annotated[
        str | None, typer.Option(help="Build this model's vectors beside the active ones.")
    ] = None,
    batch: Annotated[int, typer.Option(min=1, max=10_000, help="Rows per batch.")] = 256,
    cutover: Annotated[
        bool, typer.Option(help="Switch recall to the new model (every row has its vector).")
    ] = False,
    drop_old: Annotated[
        bool, typer.Option(help="Remove the old model's vectors and indexes after a cutover.")
    ] = False,
    abort: Annotated[
        bool,
        typer.Option(
            help="Give up a migration that is building: remove its vectors and indexes, keep "
            "the active model."
        ),
    ] = False,
) -> None:
    """Migrate to another embedding model without a new database; resumable. Prints JSON."""
    import asyncio

    from palimpsest import logs
    from palimpsest.jobs import reembedder

    if abort and (model is not None or cutover or drop_old):
        raise typer.BadParameter("--abort goes alone")
    if model is None and not cutover and not drop_old and not abort:
        raise typer.BadParameter("give --model NAME, --cutover, --drop-old or --abort")
    settings = load_settings()
    logs.configure(settings.log_level)
    result = reembedder.run(
        settings,
        model=model,
        batch=batch,
        cutover=cutover,
        drop_old=drop_old,
        abort=abort,
        say=err,
    )
    print_json(asyncio.run(result))
