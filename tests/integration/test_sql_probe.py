"""The SQL Memory probe of the attack matrix, against the live server (its configured backend)."""

from __future__ import annotations

import uuid

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys
from palimpsest_suites.attack.probe_sql import run


async def test_values_built_in_one_call_end_and_no_catalog_answers_another_scope(
    live_server_url: str, settings: Settings
) -> None:
    tenants = (f"t-{uuid.uuid4().hex[:10]}", f"t-{uuid.uuid4().hex[:10]}")
    cases = await run(live_server_url, load_keys(settings), tenants)
    assert set(cases) == {"printf_padding", "built_values", "catalog_oracle"}
    assert all(case["passed"] for case in cases.values()), cases
    assert cases["printf_padding"]["four_at_once_max_s"] < 5.0
