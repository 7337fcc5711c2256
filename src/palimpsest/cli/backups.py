"""``backup`` and ``restore``: the managed deployment's data (Neo4j dump, SQL Memory, manifest).
They run with the server's own credentials, not a run token; see docs/operations.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from palimpsest.cli.apps import app, err, load_settings, print_json


@app.command("backup")
def backup(
    folder: Annotated[Path, typer.Argument(help="A new or empty folder for the backup.")],
) -> None:
    """Back up the managed Neo4j (stopped briefly for the dump) and SQL Memory, with a manifest."""
    from palimpsest.local.backup import backup as take

    print_json(take(load_settings(), folder, say=err))


@app.command("restore")
def restore(
    folder: Annotated[
        Path, typer.Argument(exists=True, file_okay=False, help="A folder made by `backup`.")
    ],
    force: Annotated[
        bool, typer.Option(help="Replace a target that holds data, or another unfinished restore.")
    ] = False,
) -> None:
    """Verify a backup's hashes, then replace the managed deployment's data with it (resumable)."""
    from palimpsest.local.backup import restore as put_back

    print_json(put_back(load_settings(), folder, force=force, say=err))
