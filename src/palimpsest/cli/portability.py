"""Operator commands for a person's data: ``export`` and ``import`` (JSON Lines, format v1).
They run with the server's own Neo4j credentials, not a run token."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from palimpsest.cli.apps import app, load_settings, print_json


@app.command("export")
def export_person(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    user: Annotated[str, typer.Option(help="User id of the person.")],
    out: Annotated[Path, typer.Option(help="File to write (JSON Lines, mode 600).")],
) -> None:
    """Write everything a person owns in a tenant, every plane, as JSON Lines."""
    import asyncio

    from palimpsest.jobs.portability import export_to_file

    print_json(asyncio.run(export_to_file(load_settings(), tenant, user, out)))


@app.command("import")
def import_person(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="An export.")],
) -> None:
    """Load an export into the tenant and user it names; their scope must be empty."""
    import asyncio

    from palimpsest.jobs.portability import import_from_file

    print_json(asyncio.run(import_from_file(load_settings(), file)))
