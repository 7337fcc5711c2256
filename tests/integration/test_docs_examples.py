"""Every Python and shell example marked ``<!-- example: run -->`` runs as written against the
real server (docs/examples.md, "Running the examples").

Each page runs in a fresh tenant, its marked blocks in page order, with the environment the
page documents: ``PALIMPSEST_SERVER_URL`` (the live server), ``PALIMPSEST_RUN_TOKEN`` (user
``alice``, agent ``planner`` of the fresh tenant), the virtual environment's commands on
``PATH`` and a working directory that looks like the checkout (``.venv``, ``docs``). The
docs' placeholder tenant ``acme`` becomes the fresh tenant, so a second run starts as empty as
the first. What a shell block exports (``PALIMPSEST_*``), the page's later blocks see.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.docs_examples import DOCS, Block, example_pages, runnable_blocks

PAGES = [page for page in example_pages() if runnable_blocks(page)]
GRAPHQL_ERRORS = re.compile(r'"errors"\s*:\s*\[')
TIMEOUT_SECONDS = 300


def test_the_examples_the_docs_promise_are_collected() -> None:
    names = {page.relative_to(DOCS).as_posix() for page in PAGES}
    assert {
        "examples.md",
        "agents.md",
        "reference/langgraph.md",
        "reference/memory-files.md",
        "reference/context.md",
        "reference/memory-cycle.md",
    } <= names


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_pages_examples_run(
    page: Path, live_server_url: str, token: Callable[..., str], tmp_path: Path
) -> None:
    tenant = f"t-docs-{uuid.uuid4().hex[:8]}"
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(Path(sys.prefix))
    (checkout / "docs").symlink_to(DOCS)
    env = {
        **os.environ,
        "PALIMPSEST_SERVER_URL": live_server_url,
        "PALIMPSEST_RUN_TOKEN": token(tenant, "alice", "planner"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for block in runnable_blocks(page):
        if block.language == "python":
            run_python(block, env, checkout)
        else:
            env.update(run_shell(block, env, checkout, tenant, tmp_path / "exported"))


def run_python(block: Block, env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", block.code],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, failed(block, done)


def run_shell(
    block: Block, env: dict[str, str], cwd: Path, tenant: str, exported: Path
) -> dict[str, str]:
    """Run the block; the PALIMPSEST_* variables it left exported."""
    script = block.code.replace("--tenant acme", f"--tenant {tenant}")
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", f'{script}\nenv -0 > "$0"\n', str(exported)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, failed(block, done)
    assert GRAPHQL_ERRORS.search(done.stdout) is None, failed(block, done)
    pairs = (item.split("=", 1) for item in exported.read_text().split("\0") if "=" in item)
    return {k: v for k, v in pairs if k.startswith("PALIMPSEST_") and env.get(k) != v}


def failed(block: Block, done: subprocess.CompletedProcess[str]) -> str:
    return (
        f"{block.where} ({block.language}) exited {done.returncode}\n"
        f"stdout: {done.stdout[-1500:]}\nstderr: {done.stderr[-2500:]}"
    )
