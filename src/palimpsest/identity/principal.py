"""Who is calling: the verified claims of one run token."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Scope(StrEnum):
    """Whose data an operation reaches. The owner always comes from the token."""

    AGENT = "AGENT"
    USER = "USER"
    TENANT = "TENANT"
    GLOBAL = "GLOBAL"


class Role(StrEnum):
    """``admin`` acts within its own tenant only; ``operator`` (the platform operator) is the
    only role that reaches GLOBAL, i.e. beyond one tenant (docs/spec.md, Scopes)."""

    ADMIN = "admin"
    OPERATOR = "operator"
    CONSOLIDATOR = "consolidator"


class Origin(StrEnum):
    """Who wrote a row, stamped by the server from the writer's identity."""

    AGENT = "agent"
    CONSOLIDATOR = "consolidator"
    COMPACTION = "compaction"
    OPERATOR = "operator"
    IMPORT = "import"


@dataclass(frozen=True, slots=True)
class Principal:
    tenant_id: str
    user_id: str | None
    agent_name: str | None
    session_id: str | None
    run_id: str | None
    model: str | None
    roles: frozenset[Role]
    # None means "not set in the token": the defaults of docs/spec.md, Scopes, apply.
    memory_scopes: frozenset[Scope] | None
    sql_scopes: frozenset[Scope] | None
    isolated: bool
    # Set only by operator tooling that bulk-imports in-process (the evaluation and benchmark
    # harnesses); no token claim reaches it. Its rows carry origin ``import``.
    bulk_import: bool = False

    @property
    def is_admin(self) -> bool:
        return Role.ADMIN in self.roles

    @property
    def is_operator(self) -> bool:
        return Role.OPERATOR in self.roles

    @property
    def origin(self) -> Origin:
        if self.bulk_import:
            return Origin.IMPORT
        if Role.CONSOLIDATOR in self.roles:
            return Origin.CONSOLIDATOR
        if self.agent_name is None and (self.is_admin or self.is_operator):
            return Origin.OPERATOR
        return Origin.AGENT


def console_operator(tenant_id: str) -> Principal:
    """An operator of ``tenant_id`` for trusted tooling that holds the database credentials
    (``palimpsest export``/``import``, resuming erasures at start-up). Never reachable from a
    request: requests get their principal only from a verified token."""
    return Principal(
        tenant_id=tenant_id,
        user_id=None,
        agent_name=None,
        session_id=None,
        run_id=None,
        model=None,
        roles=frozenset({Role.ADMIN}),
        memory_scopes=None,
        sql_scopes=None,
        isolated=False,
    )
