"""``me`` lists only the scopes the token can actually reach."""

from __future__ import annotations

from palimpsest.graphql.types import Me
from palimpsest.identity import Role, Scope
from tests.unit.principals import principal


def test_scopes_without_an_owner_in_the_token_are_not_listed() -> None:
    everything = frozenset(Scope)
    no_user = Me.of(principal(user_id=None, memory_scopes=everything, sql_scopes=everything))
    assert no_user.memory_scopes == [Scope.AGENT, Scope.TENANT]
    assert no_user.sql_scopes == [Scope.AGENT, Scope.TENANT]
    no_agent = Me.of(principal(agent_name=None, memory_scopes=everything))
    assert no_agent.memory_scopes == [Scope.USER, Scope.TENANT]
    bare = Me.of(principal(user_id=None, agent_name=None))
    assert bare.memory_scopes == [Scope.TENANT]
    assert bare.sql_scopes == []


def test_a_full_token_lists_its_grants_in_scope_order() -> None:
    operator = Me.of(principal(roles=frozenset({Role.OPERATOR}), memory_scopes=frozenset(Scope)))
    assert operator.memory_scopes == [Scope.AGENT, Scope.USER, Scope.TENANT, Scope.GLOBAL]
    # A tenant admin listing GLOBAL does not reach it, so me does not list it either.
    admin = Me.of(principal(roles=frozenset({Role.ADMIN}), memory_scopes=frozenset(Scope)))
    assert admin.memory_scopes == [Scope.AGENT, Scope.USER, Scope.TENANT]
