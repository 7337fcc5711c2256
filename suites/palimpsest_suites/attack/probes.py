"""Targeted probes: each finding of an earlier attack round, kept as cases that must hold.

Each probe module exposes ``run(url, keys, tenants)`` and answers one entry per case, each
with ``passed`` and the figures it measured; the matrix runs them all after its census.
The placement probe sets an ontology, so it gets tenants of its own.
"""

from __future__ import annotations

import secrets
from typing import Any

from palimpsest.identity.tokens import TokenKeys
from palimpsest_suites.attack import (
    probe_bookmarks,
    probe_doors,
    probe_erase,
    probe_placement,
    probe_sql,
)
from palimpsest_suites.attack.probe_placement import Consolidate


async def run_probes(
    url: str, keys: TokenKeys, tenants: tuple[str, str], consolidate: Consolidate | None
) -> dict[str, Any]:
    """Every probe; without ``consolidate`` the placement probe waits for a running worker."""
    cases: dict[str, dict[str, Any]] = {}
    cases |= await probe_bookmarks.run(url, keys, tenants)
    cases |= await probe_erase.run(url, keys, tenants)
    cases |= await probe_sql.run(url, keys, tenants)
    cases |= await probe_doors.run(url, keys, tenants)
    own = (f"pq-{secrets.token_hex(5)}", f"pq-{secrets.token_hex(5)}")
    cases |= await probe_placement.run(url, keys, own, consolidate=consolidate)
    return cases
