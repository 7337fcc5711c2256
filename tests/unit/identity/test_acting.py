"""The consolidator acting for a user: the harvesting run's reach, never more."""

from __future__ import annotations

import pytest

from palimpsest.errors import Forbidden
from palimpsest.identity import Origin, Role, Scope, resolve_scope
from palimpsest.identity.acting import HarvestedRun, act_for_user
from palimpsest.identity.scopes import Plane, granted_scopes


def run(**changes: object) -> HarvestedRun:
    base: dict[str, object] = {
        "session_id": "s",
        "run_id": "r",
        "agent_name": "planner",
        "model": "m",
        "memory_scopes": None,
        "sql_scopes": None,
        "isolated": False,
    }
    return HarvestedRun(**{**base, **changes})  # type: ignore[arg-type]


def test_without_a_run_it_reaches_the_users_own_scope_only() -> None:
    who = act_for_user("acme", "alice")
    assert who.roles == frozenset({Role.CONSOLIDATOR})
    assert resolve_scope(who, Scope.USER).owner_id == "alice"
    for scope in (Scope.AGENT, Scope.TENANT, Scope.GLOBAL):
        with pytest.raises(Forbidden):
            resolve_scope(who, scope)
    assert granted_scopes(who, Plane.SQL) == frozenset()


def test_with_a_run_it_has_the_runs_grants_and_identity() -> None:
    who = act_for_user("acme", "alice", run(memory_scopes=frozenset({Scope.USER, Scope.AGENT})))
    assert (who.session_id, who.run_id, who.agent_name, who.model) == ("s", "r", "planner", "m")
    assert granted_scopes(who, Plane.MEMORY) == {Scope.USER, Scope.AGENT}
    assert who.origin is Origin.CONSOLIDATOR


def test_defaults_never_reach_global_and_isolation_is_kept() -> None:
    who = act_for_user("acme", "alice", run())
    assert granted_scopes(who, Plane.MEMORY) == {Scope.USER, Scope.TENANT}
    with pytest.raises(Forbidden):
        resolve_scope(who, Scope.GLOBAL)
    listed = run(memory_scopes=frozenset(Scope), isolated=True)
    assert granted_scopes(act_for_user("acme", "alice", listed), Plane.MEMORY) == {
        Scope.USER,
        Scope.AGENT,
    }
