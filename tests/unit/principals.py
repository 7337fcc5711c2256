"""A principal for unit tests: alice, agent planner, tenant acme; change what a test needs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from palimpsest.identity import Principal, Role, Scope, ScopeRef, resolve_scope

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


def scope_ref(tenant: str, scope: Scope, owner: str) -> ScopeRef:
    """A real ScopeRef, made the only way there is: resolving a token's principal."""
    who = principal(
        tenant_id=tenant,
        user_id=owner if scope is Scope.USER else "u",
        agent_name=owner if scope is Scope.AGENT else "a",
        roles=frozenset({Role.OPERATOR}) if scope is Scope.GLOBAL else frozenset(),
        memory_scopes=frozenset({scope}),
    )
    return resolve_scope(who, scope)


def forged(ref: ScopeRef, key: str) -> ScopeRef:
    """A ref whose key was tampered with, to test the layers behind ``resolve_scope``."""
    return replace(ref, scope_key=key)
