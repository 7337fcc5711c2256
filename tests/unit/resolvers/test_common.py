"""The one decoder of a row's writer stamps, redacted for the reader in the core: every door
renders what it returns."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.identity import Principal, Role
from palimpsest.resolvers.common import provenance_from
from tests.unit.principals import principal

ROW: dict[str, Any] = {
    "tenant_id": "acme",
    "session_id": "s-writer",
    "run_id": "r-writer",
    "agent_name": "writer-agent",
    "model": "m-writer",
    "origin": "agent",
}
WRITER = ("acme", "s-writer", "r-writer", "writer-agent", "m-writer")
HIDDEN = ("", None, None, None, None)


@pytest.mark.parametrize(
    ("reader", "row_tenant", "expected"),
    [
        (principal(), "acme", WRITER),  # a colleague's row
        (principal(tenant_id="globex"), "acme", HIDDEN),  # another tenant's
        (principal(), "", HIDDEN),  # a GLOBAL row, read by a member
        (principal(roles=frozenset({Role.ADMIN})), "", HIDDEN),  # a tenant admin is no operator
        (principal(roles=frozenset({Role.OPERATOR})), "", WRITER),
        (principal(tenant_id="globex", roles=frozenset({Role.OPERATOR})), "acme", WRITER),
    ],
)
def test_the_writer_is_shown_only_to_readers_who_may_see_it(
    reader: Principal, row_tenant: str, expected: tuple[str | None, ...]
) -> None:
    p = provenance_from({**ROW, "tenant_id": row_tenant}, reader)
    shown = (p.tenant_id, p.session_id, p.run_id, p.agent_name, p.model)
    assert shown == (expected if expected == HIDDEN else (row_tenant, *expected[1:]))
    assert p.origin == "agent", "origin is everyone's to see"
