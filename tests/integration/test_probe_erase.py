"""The erasure probe of the attack suite, against the live test server."""

from __future__ import annotations

import uuid

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys
from palimpsest_suites.attack import probe_erase


async def test_the_erasure_probe_passes_every_case(
    live_server_url: str, settings: Settings
) -> None:
    tenants = (f"pe-{uuid.uuid4().hex[:8]}", f"pe-{uuid.uuid4().hex[:8]}")
    found = await probe_erase.run(live_server_url, load_keys(settings), tenants)
    assert set(found) == {"unnameable_ids", "case_miss", "narrowed_admin"}
    assert {case: r["passed"] for case, r in found.items()} == dict.fromkeys(found, True), found
    assert found["unnameable_ids"]["refused"] == found["unnameable_ids"]["ids"]
