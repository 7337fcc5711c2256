"""A principal for unit tests: alice, agent planner, tenant acme; change what a test needs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from palimpsest.identity import Principal

BASE = Principal(
    tenant_id="acme",
    user_id="alice",
    agent_name="planner",
    session_id="s",
    run_id="r",
    model=None,
    roles=frozenset(),
    memory_scopes=None,
    sql_scopes=None,
    isolated=False,
)


def principal(**changes: Any) -> Principal:
    return replace(BASE, **changes)
