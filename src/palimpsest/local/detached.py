"""Servers started to outlive this process: the managed Neo4j and PostgreSQL.

The handle of each child is kept until it has exited, so a process that starts and stops a
server (the test suite does) reaps it instead of leaving a zombie, and a server meant to keep
running is never reported as a leaked child.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

_children: dict[int, subprocess.Popen[bytes]] = {}


def spawn(argv: Sequence[str], log: Path, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a session of its own, its output appended to ``log``."""
    reap()
    # The child holds its own copy of the log's descriptor; this process's copy is closed.
    with log.open("ab") as console:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=console,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # survives the CLI; stopped by `palimpsest ... stop`
        )
    _children[process.pid] = process
    return process


def reap() -> None:
    """Collect the exit status of every started server that has exited since."""
    for pid, child in list(_children.items()):
        if child.poll() is not None:
            del _children[pid]
