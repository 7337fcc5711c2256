"""The attack matrix: canaries in every plane and scope, every field as every principal.

``palimpsest bench attack`` runs it against an in-process server; the integration test
``tests/integration/test_attack_matrix.py`` runs a bounded round of the same code. The stall
probes (``probe_stalls``) measure latency, so they run in the bench only, never in the suite.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys
from palimpsest.server import serve_in_thread
from palimpsest_suites.attack import probe_stalls
from palimpsest_suites.attack.probe_placement import in_process
from palimpsest_suites.attack.run import run_attack


def run(
    settings: Settings,
    requests: int,
    concurrency: int,
    seed: int,
    say: Callable[[str], None],
    *,
    matrix: bool = True,
    stalls: bool = True,
    stall_files: int = 100,
    diff_lines: int = 20_000,
) -> dict[str, Any]:
    """The matrix (unless not ``matrix``), then the stall probes (``stalls``) with a
    directory of ``stall_files`` files and diffs of ``diff_lines`` lines."""
    settings = settings.replace(log_level="WARNING")
    say("starting the API (Neo4j, embedding model) ...")
    with serve_in_thread(settings) as url:
        keys = load_keys(settings)
        out: dict[str, Any] = {}
        if matrix:
            attack = run_attack(
                url, keys, requests, concurrency, seed, say, consolidate=in_process(settings)
            )
            out = asyncio.run(attack)
        if stalls:
            say("stall probes ...")
            own = (f"ps-{secrets.token_hex(5)}", f"ps-{secrets.token_hex(5)}")
            probe = probe_stalls.run(url, keys, own, diff_lines=diff_lines, files=stall_files)
            cases = asyncio.run(probe)
            out["probes"] = {**out.get("probes", {}), **cases}
            failed = set(out.get("probes_failed", [])) | {
                name for name, case in cases.items() if not case["passed"]
            }
            out["probes_failed"] = sorted(failed)
        return out
