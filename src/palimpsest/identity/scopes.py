"""The single place that turns a scope name into an owner.

``resolve_scope`` applies every fail-closed rule of docs/spec.md, Scopes, and returns a ``ScopeRef``
whose ``scope_key`` every Cypher statement filters on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum

from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity.names import user_id_fault
from palimpsest.identity.permissions import not_isolated, platform_operator, require, tenant_admin
from palimpsest.identity.principal import Principal, Scope

_SEPARATOR = "\x1f"
# Only this module holds the seal, so only ``resolve_scope`` (and the named tenant-configuration
# exception below) can make a ``ScopeRef``; the database's scoped handles accept nothing else.
_SEAL = object()


class Plane(StrEnum):
    """Which grant list gates the call."""

    MEMORY = "memory"
    SQL = "sql"


@dataclass(frozen=True, slots=True)
class ScopeRef:
    tenant_id: str
    scope: Scope
    owner_id: str
    scope_key: str
    _seal: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._seal is not _SEAL:
            raise TypeError("a ScopeRef comes only from identity.resolve_scope")

    def params(self) -> dict[str, str]:
        """The Cypher parameters that stamp and filter a row's scope."""
        return {
            "tenant_id": self.tenant_id,
            "scope": self.scope.value,
            "owner_id": self.owner_id,
            "scope_key": self.scope_key,
        }


def scope_key(tenant_id: str, scope: Scope, owner_id: str) -> str:
    """A short stable hash of the three parts; the separator cannot occur inside a part."""
    for part in (tenant_id, owner_id):
        if _SEPARATOR in part:
            raise InvalidArgument("identity parts may not contain the unit separator (0x1f)")
    raw = _SEPARATOR.join((tenant_id, scope.value, owner_id)).encode()
    return hashlib.sha256(raw).hexdigest()[:32]


def granted_scopes(principal: Principal, plane: Plane) -> frozenset[Scope]:
    """The scopes a principal may reach on a plane, after defaults and fail-closed rules."""
    declared = principal.memory_scopes if plane is Plane.MEMORY else principal.sql_scopes
    if declared is None:
        # Unset means what the caller owns: USER, plus TENANT for a non-isolated member, plus
        # GLOBAL for a platform operator. A tenant admin owns nothing beyond its tenant.
        owned = {Scope.USER}
        if plane is Plane.MEMORY and not principal.isolated:
            owned.add(Scope.TENANT)
        if platform_operator(principal) and not_isolated(principal):
            owned.add(Scope.GLOBAL)
        declared = frozenset(owned)
    granted = set(declared)
    if principal.isolated:
        granted -= {Scope.TENANT, Scope.GLOBAL}
    if not platform_operator(principal):
        # Fail closed: listing GLOBAL in a grant gives nothing without the operator role.
        granted.discard(Scope.GLOBAL)
    return frozenset(granted)


def resolve_scope(principal: Principal, scope: Scope, plane: Plane = Plane.MEMORY) -> ScopeRef:
    """Resolve ``scope`` for ``principal`` or refuse with the reason."""
    if scope is Scope.GLOBAL and not platform_operator(principal):
        raise Forbidden(
            "scope GLOBAL needs the operator role; a tenant admin acts within its own tenant"
        )
    if principal.isolated and scope in (Scope.TENANT, Scope.GLOBAL):
        raise Forbidden(
            f"isolated member: access to the shared {scope.value} scope is not permitted"
        )
    granted = granted_scopes(principal, plane)
    if scope not in granted:
        listed = ", ".join(sorted(s.value for s in granted)) or "none"
        raise Forbidden(
            f"scope {scope.value} is not in this token's {plane.value}_scopes (granted: {listed})"
        )
    owner = _owner_id(principal, scope)
    tenant = "" if scope is Scope.GLOBAL else principal.tenant_id
    return ScopeRef(tenant, scope, owner, scope_key(tenant, scope, owner), _SEAL)


def _owner_id(principal: Principal, scope: Scope) -> str:
    match scope:
        case Scope.AGENT:
            if not principal.agent_name:
                raise Forbidden("scope AGENT needs an agent name in the run token")
            return principal.agent_name
        case Scope.USER:
            if not principal.user_id:
                raise Forbidden("scope USER needs a user id in the run token")
            return principal.user_id
        case Scope.TENANT:
            return principal.tenant_id
        case Scope.GLOBAL:
            return ""


def sees_writer(principal: Principal, row_tenant: str) -> bool:
    """Whether ``principal`` may see who wrote a row (session, run, agent, model, tenant).

    A row's ``tenant_id`` is its scope's tenant, and ``""`` for GLOBAL (all tenants). Within
    the reader's own tenant the writer is a colleague; across tenants only a platform operator
    sees the writer, so a GLOBAL row never tells one tenant who in another tenant wrote it.
    Fails closed: any other combination hides the writer.
    """
    if platform_operator(principal):
        return True
    return row_tenant != "" and row_tenant == principal.tenant_id


def tenant_config_ref(principal: Principal) -> ScopeRef:
    """The tenant scope, for tenant-wide records the server keeps on its own behalf: reading
    the ontology, and the erasure jobs and their audit trail. It grants nothing: callers still
    need ``resolve_scope`` to read or write data."""
    return _tenant_ref(principal.tenant_id)


@dataclass(frozen=True, slots=True)
class PersonRefs:
    """Where one person's data lives in a tenant, for erasing or exporting it.

    ``person`` is their USER scope (every plane, and their SQL database). ``tenant`` is the
    tenant scope, reached on the person's behalf only to find what is theirs there (their
    sources on tenant facts, and the sourceless facts they wrote) and to keep the erasure's job.
    """

    user_id: str
    person: ScopeRef
    tenant: ScopeRef


def names_members(principal: Principal) -> bool:
    """Whether ``principal`` may name another user of its tenant (to erase or export them).

    A tenant admin whose token reaches the tenant's shared memory: the role alone is not
    enough, since a token narrowed to USER memory (or isolated) must not reach other members'
    data, and erasing a member also rewrites the tenant scope.
    """
    return tenant_admin(principal) and Scope.TENANT in granted_scopes(principal, Plane.MEMORY)


def person_refs(principal: Principal, user_id: str | None = None) -> PersonRefs:
    """The scopes of the caller (``user_id`` None) or, for a tenant admin, of a named user.

    Naming a user here is the one exception to "owners come only from the token": only an
    admin that ``names_members`` may name anyone but themselves, only inside their own
    tenant, and only an id a token could carry (``names.user_id_fault``). The caller's own
    data needs a user id in the token and the USER grant.
    """
    if user_id is None or user_id == principal.user_id:
        person = resolve_scope(principal, Scope.USER)
        return PersonRefs(person.owner_id, person, _tenant_ref(principal.tenant_id))
    require(tenant_admin(principal), "naming another user needs the admin role of this tenant")
    require(not_isolated(principal), "an isolated admin cannot reach another user's data")
    if not names_members(principal):
        raise Forbidden(
            "naming another user needs TENANT in this token's memory_scopes: a token "
            "narrowed to USER memory reaches no other member's data"
        )
    fault = user_id_fault(user_id)
    if fault is not None:
        raise InvalidArgument(f"userId {fault}")
    tenant = principal.tenant_id
    key = scope_key(tenant, Scope.USER, user_id)
    return PersonRefs(
        user_id, ScopeRef(tenant, Scope.USER, user_id, key, _SEAL), _tenant_ref(tenant)
    )


def authored_ref(tenant_id: str, scope: str, owner_id: str, row_tenant: str) -> ScopeRef | None:
    """A shared scope of ``tenant_id`` where erasure found rows one of its members wrote
    (``cypher/authored.py``): the tenant's own scope, one of its agents', or GLOBAL. None for
    anything else, so a found row never opens another tenant's scope."""
    match scope:
        case Scope.TENANT.value if owner_id == tenant_id == row_tenant:
            return _tenant_ref(tenant_id)
        case Scope.AGENT.value if row_tenant == tenant_id and owner_id:
            key = scope_key(tenant_id, Scope.AGENT, owner_id)
            return ScopeRef(tenant_id, Scope.AGENT, owner_id, key, _SEAL)
        case Scope.GLOBAL.value if row_tenant == "":
            return ScopeRef("", Scope.GLOBAL, "", scope_key("", Scope.GLOBAL, ""), _SEAL)
    return None


def _tenant_ref(tenant: str) -> ScopeRef:
    return ScopeRef(tenant, Scope.TENANT, tenant, scope_key(tenant, Scope.TENANT, tenant), _SEAL)


def swept_ref(tenant_id: str, scope: str, owner_id: str, key: str | None = None) -> ScopeRef:
    """A scope the retention sweep removes the expired past of, on the server's behalf (its
    ids come from ``cypher/sweep.py`` ``SWEEP_SCOPES``). It grants no caller anything; the
    key is recomputed from the parts, and a stored key that does not match is refused."""
    named = Scope(scope)
    computed = scope_key(tenant_id, named, owner_id)
    if key is not None and key != computed:
        raise InvalidArgument("a scope's key does not match its parts")
    return ScopeRef(tenant_id, named, owner_id, computed, _SEAL)
