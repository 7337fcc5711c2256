"""The authentication middleware's caller: what ``request.user`` holds after a good token."""

from __future__ import annotations

from palimpsest.graphql import view
from palimpsest.middleware.auth import AuthenticatedCaller
from tests.unit.principals import principal


def test_the_caller_carries_its_principal_and_a_display_name() -> None:
    caller = AuthenticatedCaller(principal(tenant_id="t", user_id=None, agent_name="bot"))
    assert caller.is_authenticated
    assert caller.principal.tenant_id == "t"
    assert caller.display_name == "bot"
    assert AuthenticatedCaller(principal(tenant_id="t", user_id="ada")).display_name == "ada"


def test_the_old_import_path_is_the_same_class() -> None:
    # Defined in graphql/view.py until issue 44 moved it below the doors.
    assert view.AuthenticatedCaller is AuthenticatedCaller
