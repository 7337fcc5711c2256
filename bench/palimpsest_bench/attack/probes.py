"""Targeted probes: each finding of an earlier attack round, kept as cases that must hold.

Each probe module exposes ``run(url, keys, tenants)`` and answers one entry per case, each
with ``passed`` and the figures it measured; the matrix runs them all after its census.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from palimpsest.identity.tokens import TokenKeys
from palimpsest_bench.attack import probe_bookmarks

Probe = Callable[[str, TokenKeys, tuple[str, str]], Awaitable[dict[str, dict[str, Any]]]]
PROBES: tuple[Probe, ...] = (probe_bookmarks.run,)


async def run_probes(url: str, keys: TokenKeys, tenants: tuple[str, str]) -> dict[str, Any]:
    cases: dict[str, dict[str, Any]] = {}
    for probe in PROBES:
        cases |= await probe(url, keys, tenants)
    return cases
