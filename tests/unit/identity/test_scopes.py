from __future__ import annotations

from typing import Any

import pytest

from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import (
    Origin,
    Plane,
    Principal,
    Role,
    Scope,
    granted_scopes,
    resolve_scope,
)
from palimpsest.identity.scopes import names_members, person_refs, scope_key, sees_writer
from tests.unit.principals import principal


def who(**overrides: Any) -> Principal:
    return principal(**overrides)


def test_defaults_are_what_the_caller_owns() -> None:
    assert granted_scopes(who(), Plane.MEMORY) == {Scope.USER, Scope.TENANT}
    assert granted_scopes(who(), Plane.SQL) == {Scope.USER}
    assert granted_scopes(who(isolated=True), Plane.MEMORY) == {Scope.USER}
    operator = who(roles=frozenset({Role.OPERATOR}))
    assert granted_scopes(operator, Plane.MEMORY) == {Scope.USER, Scope.TENANT, Scope.GLOBAL}
    assert granted_scopes(operator, Plane.SQL) == {Scope.USER, Scope.GLOBAL}


def test_a_tenant_admin_never_gets_global() -> None:
    """Finding 5: an admin of one tenant got GLOBAL (every tenant) by default."""
    for plane in Plane:
        admin = who(roles=frozenset({Role.ADMIN}))
        assert Scope.GLOBAL not in granted_scopes(admin, plane)
        listed = who(
            roles=frozenset({Role.ADMIN}),
            memory_scopes=frozenset(Scope),
            sql_scopes=frozenset(Scope),
        )
        assert Scope.GLOBAL not in granted_scopes(listed, plane)
        with pytest.raises(Forbidden, match="operator role; a tenant admin acts within"):
            resolve_scope(listed, Scope.GLOBAL, plane)
        assert resolve_scope(listed, Scope.TENANT, plane).owner_id == "acme"


def test_owner_ids_come_from_the_principal() -> None:
    p = who(memory_scopes=frozenset(Scope))
    assert resolve_scope(p, Scope.AGENT).owner_id == "planner"
    assert resolve_scope(p, Scope.USER).owner_id == "alice"
    assert resolve_scope(p, Scope.TENANT).owner_id == "acme"
    keys = {resolve_scope(p, s).scope_key for s in (Scope.AGENT, Scope.USER, Scope.TENANT)}
    assert len(keys) == 3


def test_global_needs_the_operator_role_even_when_listed() -> None:
    with pytest.raises(Forbidden, match="operator"):
        resolve_scope(who(memory_scopes=frozenset({Scope.GLOBAL})), Scope.GLOBAL)
    operator = who(roles=frozenset({Role.OPERATOR}), memory_scopes=frozenset({Scope.GLOBAL}))
    ref = resolve_scope(operator, Scope.GLOBAL)
    assert (ref.tenant_id, ref.owner_id) == ("", "")
    # an operator whose grant leaves GLOBAL out does not get it either
    narrow = who(roles=frozenset({Role.OPERATOR}), sql_scopes=frozenset({Scope.USER}))
    with pytest.raises(Forbidden, match="sql_scopes"):
        resolve_scope(narrow, Scope.GLOBAL, Plane.SQL)


def test_isolated_members_never_reach_shared_scopes() -> None:
    roles = frozenset({Role.ADMIN, Role.OPERATOR})
    p = who(isolated=True, roles=roles, memory_scopes=frozenset(Scope))
    for scope in (Scope.TENANT, Scope.GLOBAL):
        with pytest.raises(Forbidden):
            resolve_scope(p, scope)
    assert resolve_scope(p, Scope.USER).owner_id == "alice"
    assert Scope.GLOBAL not in granted_scopes(who(isolated=True, roles=roles), Plane.MEMORY)


def test_the_writer_of_a_row_is_shown_within_the_tenant_or_to_operators() -> None:
    member, admin = who(), who(roles=frozenset({Role.ADMIN}))
    operator = who(roles=frozenset({Role.OPERATOR}), tenant_id="elsewhere")
    assert sees_writer(member, "acme")
    assert sees_writer(admin, "acme")
    assert not sees_writer(admin, "")  # a GLOBAL row
    assert not sees_writer(member, "other")
    assert not sees_writer(who(tenant_id=""), "")  # an empty tenant never matches GLOBAL
    assert sees_writer(operator, "")
    assert sees_writer(operator, "acme")


def test_operator_and_admin_without_an_agent_write_as_operator() -> None:
    assert who(agent_name=None, roles=frozenset({Role.OPERATOR})).origin is Origin.OPERATOR
    assert who(agent_name=None, roles=frozenset({Role.ADMIN})).origin is Origin.OPERATOR
    assert who(roles=frozenset({Role.OPERATOR})).origin is Origin.AGENT
    assert who(agent_name=None).origin is Origin.AGENT


def test_missing_owner_ids_and_ungranted_scopes_refuse() -> None:
    with pytest.raises(Forbidden, match="user id"):
        resolve_scope(who(user_id=None), Scope.USER)
    with pytest.raises(Forbidden, match="agent name"):
        resolve_scope(who(agent_name=None, memory_scopes=frozenset({Scope.AGENT})), Scope.AGENT)
    with pytest.raises(Forbidden, match="memory_scopes"):
        resolve_scope(who(memory_scopes=frozenset({Scope.USER})), Scope.TENANT)
    with pytest.raises(Forbidden, match="sql_scopes"):
        resolve_scope(who(), Scope.TENANT, Plane.SQL)


def test_scope_key_separates_parts_and_refuses_the_separator() -> None:
    assert scope_key("a", Scope.USER, "bc") != scope_key("ab", Scope.USER, "c")
    assert scope_key("acme", Scope.TENANT, "acme") != scope_key("acme", Scope.USER, "acme")
    with pytest.raises(InvalidArgument):
        scope_key("a\x1fb", Scope.USER, "c")


def test_person_refs_of_the_caller_need_the_user_grant() -> None:
    refs = person_refs(who())
    assert (refs.user_id, refs.person.scope, refs.person.owner_id) == ("alice", Scope.USER, "alice")
    assert refs.person.scope_key == scope_key("acme", Scope.USER, "alice")
    assert refs.tenant.scope_key == scope_key("acme", Scope.TENANT, "acme")
    with pytest.raises(Forbidden, match="user id"):
        person_refs(who(user_id=None))
    with pytest.raises(Forbidden, match="memory_scopes"):
        person_refs(who(memory_scopes=frozenset({Scope.AGENT})))


def test_only_a_non_isolated_admin_names_another_user_and_only_in_their_tenant() -> None:
    admin = who(roles=frozenset({Role.ADMIN}), user_id="root")
    refs = person_refs(admin, "bob")
    assert (refs.person.tenant_id, refs.person.owner_id) == ("acme", "bob")
    assert refs.person.scope_key == scope_key("acme", Scope.USER, "bob")
    with pytest.raises(Forbidden, match="admin"):
        person_refs(who(), "bob")
    with pytest.raises(Forbidden, match="isolated"):
        person_refs(who(roles=frozenset({Role.ADMIN}), isolated=True), "bob")
    for bad in ("", " ", "x" * 257, "a\x1fb"):
        with pytest.raises(InvalidArgument):
            person_refs(admin, bad)


# Ids no token can carry (the token's user claim is held to the same rule): each named one
# got a DONE receipt for an erasure of nothing.
UNNAMEABLE = ("ev1\x00", "\x00", "ev\u200b1", "\ufeffev1", "ev1\u200d", " ev1", "ev1\n", "a\u2028b")


@pytest.mark.parametrize("bad", UNNAMEABLE)
def test_an_admin_cannot_name_an_id_no_token_could_carry(bad: str) -> None:
    admin = who(roles=frozenset({Role.ADMIN}), user_id="root")
    with pytest.raises(InvalidArgument, match="userId must not"):
        person_refs(admin, bad)


def test_user_ids_are_case_sensitive_and_otherwise_free() -> None:
    admin = who(roles=frozenset({Role.ADMIN}), user_id="root")
    upper, lower = person_refs(admin, "EV1"), person_refs(admin, "ev1")
    assert upper.person.scope_key != lower.person.scope_key
    assert person_refs(admin, "Jane Doe").user_id == "Jane Doe"
    assert person_refs(admin, "zoë@example.org").user_id == "zoë@example.org"


def test_naming_a_member_needs_the_tenant_grant_as_well_as_the_role() -> None:
    """A token narrowed to USER memory must not reach other members' data."""
    narrowed = who(
        roles=frozenset({Role.ADMIN}), user_id="root", memory_scopes=frozenset({Scope.USER})
    )
    assert not names_members(narrowed)
    with pytest.raises(Forbidden, match="TENANT"):
        person_refs(narrowed, "bob")
    assert person_refs(narrowed).user_id == "root"  # their own data needs USER only
    granted = who(
        roles=frozenset({Role.ADMIN}), memory_scopes=frozenset({Scope.USER, Scope.TENANT})
    )
    assert names_members(granted)
    assert not names_members(who())
    assert not names_members(who(roles=frozenset({Role.ADMIN}), isolated=True))


def test_bulk_imports_by_operator_tooling_write_as_import() -> None:
    assert who(bulk_import=True).origin is Origin.IMPORT
    assert who(bulk_import=True, roles=frozenset({Role.CONSOLIDATOR})).origin is Origin.IMPORT
