"""Where a new tenant goes: rendezvous (highest random weight) hashing over the shard names.

Deterministic, so every API replica and worker picks the same shard for a tenant without
asking anyone, and the directory's insert-if-absent only settles a race between two first
writes that agree anyway. The directory, not the hash, is what routes a tenant once it
exists: adding a shard moves no existing tenant (only new tenants spread onto it, about
1/N of them), and removing one is a move first (docs/decisions/0011-tenant-shards.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def _weight(shard: str, tenant_id: str) -> bytes:
    return hashlib.sha256(f"{shard}\x1f{tenant_id}".encode()).digest()


def place(tenant_id: str, shards: Sequence[str]) -> str:
    """The shard a tenant without a directory entry is assigned to."""
    if not shards:
        raise ValueError("no shard to place a tenant on")
    return max(shards, key=lambda name: (_weight(name, tenant_id), name))
