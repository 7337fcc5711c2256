"""The attack matrix: canaries in every plane and scope, every field as every principal.

``palimpsest bench attack`` runs it against an in-process server; the integration test
``tests/integration/test_attack_matrix.py`` runs a bounded round of the same code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys
from palimpsest.server import serve_in_thread
from palimpsest_bench.attack.probe_placement import in_process
from palimpsest_bench.attack.run import run_attack


def run(
    settings: Settings,
    requests: int,
    concurrency: int,
    seed: int,
    say: Callable[[str], None],
) -> dict[str, Any]:
    settings = settings.model_copy(update={"log_level": "WARNING"})
    say("starting the API (Neo4j, embedding model) ...")
    with serve_in_thread(settings) as url:
        attack = run_attack(
            url,
            load_keys(settings),
            requests,
            concurrency,
            seed,
            say,
            consolidate=in_process(settings),
        )
        return asyncio.run(attack)
