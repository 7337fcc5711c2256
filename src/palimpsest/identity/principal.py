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
    only role that reaches GLOBAL, i.e. beyond one tenant (SPEC section 1)."""

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
    # None means "not set in the token": the defaults of SPEC section 1 apply.
    memory_scopes: frozenset[Scope] | None
    sql_scopes: frozenset[Scope] | None
    isolated: bool

    @property
    def is_admin(self) -> bool:
        return Role.ADMIN in self.roles

    @property
    def is_operator(self) -> bool:
        return Role.OPERATOR in self.roles

    @property
    def origin(self) -> Origin:
        if Role.CONSOLIDATOR in self.roles:
            return Origin.CONSOLIDATOR
        if self.agent_name is None and (self.is_admin or self.is_operator):
            return Origin.OPERATOR
        return Origin.AGENT
