"""The shard directory: which shard holds each tenant, kept on the designated shard.

One ``(:TenantShard {tenant_id, shard})`` node per tenant that has written, made at its
first write by ``policy.place`` and never changed by a request (a move will change it,
docs/decisions/0011-tenant-shards.md). Every process caches what it read: an entry changes
only by a move, which will tell the processes. GLOBAL (tenant ``""``) has no entry: it lives
on the designated shard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import LiteralString

from palimpsest.cypher.driver.executor import Database, SchemaStatement
from palimpsest.cypher.shards.policy import place
from palimpsest.errors import Unavailable


def _directory(name: str, text: LiteralString) -> SchemaStatement:
    """The directory's rows are the server's bookkeeping, like the schema record: no scope's."""
    return SchemaStatement(name, text)


CONSTRAINT_TENANT_SHARD = _directory(
    "CONSTRAINT_TENANT_SHARD",
    "CREATE CONSTRAINT tenant_shard IF NOT EXISTS "
    "FOR (t:TenantShard) REQUIRE t.tenant_id IS UNIQUE",
)
LOOKUP_TENANT_SHARD = _directory(
    "LOOKUP_TENANT_SHARD",
    "MATCH (t:TenantShard {tenant_id: $tenant}) RETURN t.shard AS shard",
)
# Insert-if-absent under the constraint's lock: two first writes racing on two replicas get
# the same answer, the first one's.
ASSIGN_TENANT_SHARD = _directory(
    "ASSIGN_TENANT_SHARD",
    """
MERGE (t:TenantShard {tenant_id: $tenant})
ON CREATE SET t.shard = $shard, t.assigned_at = datetime()
RETURN t.shard AS shard
""",
)
DIRECTORY_SHARDS = _directory(
    "DIRECTORY_SHARDS",
    "MATCH (t:TenantShard) RETURN DISTINCT t.shard AS shard ORDER BY shard",
)


class Directory:
    """Tenant -> shard, read from the designated shard's database and cached here."""

    def __init__(self, db: Database, shards: Sequence[str]) -> None:
        self._db = db
        self._shards = tuple(shards)
        self._cache: dict[str, str] = {}

    async def prepare(self) -> None:
        """The constraint, then the start-up check: every shard an entry names is configured
        (refused in one line otherwise: those tenants would have nowhere to go)."""
        await self._db.write(CONSTRAINT_TENANT_SHARD)
        named = [row["shard"] for row in await self._db.read(DIRECTORY_SHARDS)]
        if unknown := [name for name in named if name not in self._shards]:
            raise Unavailable(
                f"the shard directory names shards that PALIMPSEST_NEO4J_SHARDS does not list: "
                f"{', '.join(unknown)} (configured: {', '.join(self._shards)})"
            )

    def cached(self, tenant_id: str) -> str | None:
        return self._cache.get(tenant_id)

    async def shard_of(self, tenant_id: str, *, assign: bool) -> str:
        """The tenant's shard; ``assign`` (a write) records one for a tenant without an entry.
        A read of a tenant that never wrote goes where its first write will (and finds
        nothing there), without an entry."""
        known = self._cache.get(tenant_id)
        if known is not None:
            return known
        rows = await self._db.read(LOOKUP_TENANT_SHARD, {"tenant": tenant_id})
        if not rows:
            chosen = place(tenant_id, self._shards)
            if not assign:
                return chosen
            rows = await self._db.write(ASSIGN_TENANT_SHARD, {"tenant": tenant_id, "shard": chosen})
        shard = str(rows[0]["shard"])
        if shard not in self._shards:
            # Written since start-up by a process with another shard list: refuse, and name
            # no tenant (the caller's own request is the one refused).
            raise Unavailable(f"this tenant's shard {shard!r} is not configured on this server")
        self._cache[tenant_id] = shard
        return shard
