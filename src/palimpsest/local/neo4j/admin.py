"""``neo4j-admin`` for the managed server, run from its own jars (no launcher scripts).

Community Edition has no online dump (``neo4j-admin database backup`` and ``STOP DATABASE``
are Enterprise-only), so ``dump`` and ``load`` need the server stopped; the callers do that.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local.neo4j.java import find_java

_TAIL = 2000  # characters of the tool's output kept in an error (it names files, never data)


def run(settings: Settings, *args: str) -> None:
    """Run ``neo4j-admin ARGS`` against the managed home; raise Unavailable on failure."""
    home = settings.neo4j_home
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}
    argv = [
        str(find_java(settings).java),
        "--enable-native-access=ALL-UNNAMED",
        "-cp",
        str(home / "lib" / "*"),
        "org.neo4j.server.startup.Neo4jAdminCommand",
        *args,
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = (done.stdout + done.stderr).splitlines()
        tail = "\n".join(x for x in lines if not x.startswith(("Files:", "WARNING:")))[-_TAIL:]
        raise Unavailable(f"neo4j-admin {' '.join(args[:2])} failed ({done.returncode}): {tail}")


def dump(settings: Settings, folder: Path) -> Path:
    """Dump the configured database into ``folder`` (the server must be stopped)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = settings.neo4j.database
    run(settings, "database", "dump", name, f"--to-path={folder}", "--overwrite-destination=true")
    return folder / f"{name}.dump"


def load(settings: Settings, folder: Path) -> None:
    """Replace the configured database with ``folder/<name>.dump`` (the server must be stopped)."""
    name = settings.neo4j.database
    run(settings, "database", "load", name, f"--from-path={folder}", "--overwrite-destination=true")
