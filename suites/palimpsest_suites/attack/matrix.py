"""Who attacks: the principals of the attack matrix and what each may see.

The reach model below is written from the identity table (docs/reference/identity.md), on
purpose apart from ``identity.resolve_scope``: if the server's rules drift from the documented
ones, the matrix disagrees with the server instead of copying its mistake. Adding a principal
is one line in ``ROLES`` (planted in both tenants) or ``EXTRAS`` (one tenant only).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from palimpsest.identity import Role, Scope

AGENT, USER, TENANT, GLOBAL = Scope.AGENT, Scope.USER, Scope.TENANT, Scope.GLOBAL
ALL_THREE = (AGENT, USER, TENANT)


class Plane(StrEnum):
    MEMORY = "memory"  # key/value, documents, facts, ontology
    SQL = "sql"


@dataclass(frozen=True, slots=True)
class Who:
    """One kind of caller, as its run token describes it."""

    role: str
    user: str | None
    agent: str | None
    admin: bool = False  # tenant admin: acts within its own tenant
    operator: bool = False  # platform operator: the only role that reaches GLOBAL
    isolated: bool = False
    memory: tuple[Scope, ...] | None = None  # the token's memory_scopes; None = defaults
    sql: tuple[Scope, ...] | None = None  # the token's sql_scopes; None = defaults


# Both tenants use the same user and agent names, so only the tenant tells their scopes apart.
ROLES: tuple[Who, ...] = (
    Who("member", "u1", "a1", memory=ALL_THREE, sql=ALL_THREE),
    Who("member2", "u2", "a2"),
    Who("admin", "adm", None, admin=True),
    Who("operator", "op", None, operator=True),
    Who("isolated", "iso", "a3", isolated=True, memory=ALL_THREE, sql=ALL_THREE),
    Who("tokenonly", None, None, memory=ALL_THREE, sql=ALL_THREE),
    Who("agentonly", None, "a1", memory=(AGENT, TENANT), sql=(AGENT,)),
)
# (tenant index, who): principals that exist in one tenant only.
EXTRAS: tuple[tuple[int, Who], ...] = ()

Identity = tuple[str, Scope, str]  # (tenant or "" for GLOBAL, scope, owner)


@dataclass(frozen=True, slots=True)
class Member:
    """A ``Who`` placed in a tenant; ``name`` is unique in the run."""

    tenant: str
    who: Who

    @property
    def name(self) -> str:
        return f"{self.tenant}/{self.who.role}"

    def reach(self, plane: Plane) -> frozenset[Scope]:
        """The scopes this token reaches on a plane, by the rules of docs/reference/identity.md."""
        w = self.who
        declared = w.memory if plane is Plane.MEMORY else w.sql
        if declared is None:
            owned = {USER}
            if plane is Plane.MEMORY and not w.isolated:
                owned.add(TENANT)
            if w.operator and not w.isolated:
                owned.add(GLOBAL)
            declared = tuple(owned)
        scopes = set(declared)
        if w.isolated:
            scopes -= {TENANT, GLOBAL}
        if not w.operator:
            scopes.discard(GLOBAL)
        if w.agent is None:
            scopes.discard(AGENT)
        if w.user is None:
            scopes.discard(USER)
        return frozenset(scopes)

    @property
    def roles(self) -> list[Role]:
        return [
            r for r, on in ((Role.ADMIN, self.who.admin), (Role.OPERATOR, self.who.operator)) if on
        ]

    def identity(self, scope: Scope) -> Identity:
        match scope:
            case Scope.AGENT:
                return (self.tenant, scope, self.who.agent or "")
            case Scope.USER:
                return (self.tenant, scope, self.who.user or "")
            case Scope.TENANT:
                return (self.tenant, scope, self.tenant)
            case Scope.GLOBAL:
                return ("", scope, "")

    def identities(self, plane: Plane) -> frozenset[Identity]:
        return frozenset(self.identity(s) for s in self.reach(plane))

    def sees_provenance_of(self, writer: Member) -> bool:
        """Who wrote a row (run, session) shows to its readers in the writer's tenant, and to
        operators; other readers of the row see it without its writer."""
        if self == writer:
            return True
        shared = self.identities(Plane.MEMORY) & writer.identities(Plane.MEMORY)
        return bool(shared) and (self.tenant == writer.tenant or self.who.operator)

    def lists_sql_database(self, owner: Identity, view: Scope) -> bool:
        """Whether sqlDatabases(scope: view) lists a database: GLOBAL for whoever reaches it
        on the SQL plane; TENANT (its own tenant's) for a tenant admin or an operator."""
        if view is GLOBAL:
            return GLOBAL in self.reach(Plane.SQL)
        if not (self.who.admin or self.who.operator):
            return False
        if view is TENANT:
            return not self.who.isolated and owner[0] == self.tenant and owner[1] is not GLOBAL
        return False


def members(tenants: tuple[str, str]) -> list[Member]:
    everyone = [Member(t, w) for t in tenants for w in ROLES]
    return everyone + [Member(tenants[i], w) for i, w in EXTRAS]
