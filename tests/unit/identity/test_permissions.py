"""The named predicates: each says yes exactly for the principals it names."""

from __future__ import annotations

import pytest

from palimpsest.errors import Forbidden
from palimpsest.identity import Role
from palimpsest.identity.permissions import (
    admin_or_operator,
    isolated,
    not_isolated,
    platform_operator,
    require,
    tenant_admin,
    tenant_records_reader,
)
from tests.unit.principals import principal

MEMBER = principal()
ADMIN = principal(roles=frozenset({Role.ADMIN}))
OPERATOR = principal(roles=frozenset({Role.OPERATOR}))
CONSOLIDATOR = principal(roles=frozenset({Role.CONSOLIDATOR}))
ISOLATED_ADMIN = principal(roles=frozenset({Role.ADMIN}), isolated=True)


@pytest.mark.parametrize(
    ("predicate", "yes"),
    [
        (tenant_admin, {"ADMIN", "ISOLATED_ADMIN"}),
        (platform_operator, {"OPERATOR"}),
        (admin_or_operator, {"ADMIN", "ISOLATED_ADMIN", "OPERATOR"}),
        (isolated, {"ISOLATED_ADMIN"}),
        (not_isolated, {"MEMBER", "ADMIN", "OPERATOR", "CONSOLIDATOR"}),
        (tenant_records_reader, {"ADMIN"}),
    ],
)
def test_each_predicate_names_exactly_its_principals(predicate: object, yes: set[str]) -> None:
    everyone = {
        "MEMBER": MEMBER,
        "ADMIN": ADMIN,
        "OPERATOR": OPERATOR,
        "CONSOLIDATOR": CONSOLIDATOR,
        "ISOLATED_ADMIN": ISOLATED_ADMIN,
    }
    assert callable(predicate)
    assert {name for name, p in everyone.items() if predicate(p)} == yes


def test_require_refuses_with_forbidden_and_the_message() -> None:
    require(True, "unused")
    with pytest.raises(Forbidden, match="needs the admin role"):
        require(tenant_admin(MEMBER), "needs the admin role")
