"""Who attacks: the principals of the attack matrix and what each may see.

The reach model below is written from the README's identity table, on purpose apart from
``identity.resolve_scope``: if the server's rules drift from the documented ones, the matrix
disagrees with the server instead of copying its mistake. Adding a principal is one line in
``ROLES`` (planted in both tenants) or ``EXTRAS`` (one tenant only).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from palimpsest.identity import Role, Scope

AGENT, USER, TENANT, GLOBAL = Scope.AGENT, Scope.USER, Scope.TENANT, Scope.GLOBAL
ALL_THREE = (AGENT, USER, TENANT)
ADMIN_ROLE = Role.ADMIN


class Plane(StrEnum):
    MEMORY = "memory"  # key/value, documents, facts, ontology
    SQL = "sql"


@dataclass(frozen=True, slots=True)
class Who:
    """One kind of caller, as its run token describes it."""

    role: str
    user: str | None
    agent: str | None
    admin: bool = False
    isolated: bool = False
    memory: tuple[Scope, ...] | None = None  # the token's memory_scopes; None = defaults
    sql: tuple[Scope, ...] | None = None  # the token's sql_scopes; None = defaults


# Both tenants use the same user and agent names, so only the tenant tells their scopes apart.
ROLES: tuple[Who, ...] = (
    Who("member", "u1", "a1", memory=ALL_THREE, sql=ALL_THREE),
    Who("member2", "u2", "a2"),
    Who("admin", "adm", None, admin=True),
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
        """The scopes this token reaches on a plane, by the README's rules."""
        w = self.who
        declared = w.memory if plane is Plane.MEMORY else w.sql
        if declared is None:
            owned = {USER}
            if plane is Plane.MEMORY and not w.isolated:
                owned.add(TENANT)
            if w.admin and not w.isolated:
                owned.add(GLOBAL)
            declared = tuple(owned)
        scopes = set(declared)
        if w.isolated:
            scopes -= {TENANT, GLOBAL}
        if not w.admin:
            scopes.discard(GLOBAL)
        if w.agent is None:
            scopes.discard(AGENT)
        if w.user is None:
            scopes.discard(USER)
        return frozenset(scopes)

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
        """Who wrote a row (run, session) shows to readers of that row in the writer's tenant."""
        if self == writer:
            return True
        shared = self.identities(Plane.MEMORY) & writer.identities(Plane.MEMORY)
        return self.tenant == writer.tenant and bool(shared)

    def lists_sql_database(self, owner: Identity, view: Scope) -> bool:
        """Whether sqlDatabases(scope: view) lists a database: admins only, by view."""
        if not self.who.admin:
            return False
        if view is GLOBAL:
            return GLOBAL in self.reach(Plane.SQL)
        if view is TENANT:
            return not self.who.isolated and owner[0] == self.tenant and owner[1] is not GLOBAL
        return False


def members(tenants: tuple[str, str]) -> list[Member]:
    everyone = [Member(t, w) for t in tenants for w in ROLES]
    return everyone + [Member(tenants[i], w) for i, w in EXTRAS]
