"""A tenant's day of model tokens (``PALIMPSEST_MAX_EXTRACTION_TOKENS_PER_DAY``), as the
extractor and the judge spend it: one count per tenant and UTC day, kept in the tenant scope."""

from __future__ import annotations

from palimpsest.cypher import extraction as xq
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.services import Services


class TokenDay:
    """``schema.pairs.TokenCap`` (and the extractor's ``TokenLedger``) over the tenant's
    record; ``tenant``: the tenant's own scope (``identity.scopes.tenant_config_ref``)."""

    def __init__(self, svc: Services, tenant: ScopeRef) -> None:
        self.svc, self.tenant = svc, tenant

    async def tokens_today(self) -> int:
        params = {"day": self.svc.clock().date().isoformat()}
        [row] = await self.svc.db.scoped(self.tenant).read(xq.EXTRACTION_TOKENS, params)
        return int(row["used"])

    async def spend_tokens(self, tokens: int) -> int:
        now = self.svc.clock()
        params = {"day": now.date().isoformat(), "tokens": tokens, "now": now}
        [row] = await self.svc.db.scoped(self.tenant).write(xq.SPEND_EXTRACTION_TOKENS, params)
        return int(row["used"])
