"""The placement-quote attack probe against the live test server: every case passes."""

from __future__ import annotations

import uuid

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys
from palimpsest.resolvers.services import Services
from palimpsest_suites.attack import probe_placement
from tests.integration.cycle import drain

CASES = {
    "harvest-placed-quote",
    "agent-placed-quote",
    "assert-placed-quote",
    "shared-quote-control",
    "other-tenant",
}


async def test_no_private_quote_reaches_another_member(
    live_server_url: str, settings: Settings, svc: Services
) -> None:
    async def consolidate(tenant: str, user: str) -> int:
        return (await drain(svc, tenant, user)).consolidated

    tenants = (f"pq-{uuid.uuid4().hex[:10]}", f"pq-{uuid.uuid4().hex[:10]}")
    result = await probe_placement.run(
        live_server_url, load_keys(settings), tenants, consolidate=consolidate
    )
    assert set(result) == CASES
    assert {case: r["passed"] for case, r in result.items()} == dict.fromkeys(CASES, True), result
    assert result["harvest-placed-quote"]["facts"] == 1
    assert result["shared-quote-control"]["quoted"] == ["billing runs in the second region"]
