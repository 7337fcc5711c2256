"""Who may do what beyond their own scopes: the named predicates every operation checks.

Owners come from ``resolve_scope``; these decide the few operations that act on a tenant as
a whole (its ontology, its queue, its erasures, its SQL databases). Each is a plain function
of the verified principal, so a door never writes its own ``is_admin and ...``; ``require``
turns a refusal into the one ``FORBIDDEN`` error.
"""

from __future__ import annotations

from palimpsest.errors import Forbidden
from palimpsest.identity.principal import Principal, Role


def tenant_admin(principal: Principal) -> bool:
    """An administrator of the principal's own tenant (never of another)."""
    return Role.ADMIN in principal.roles


def platform_operator(principal: Principal) -> bool:
    """The platform's operator: the one role that reaches beyond a tenant (GLOBAL)."""
    return Role.OPERATOR in principal.roles


def admin_or_operator(principal: Principal) -> bool:
    return tenant_admin(principal) or platform_operator(principal)


def isolated(principal: Principal) -> bool:
    """An isolated member reaches no shared scope of its tenant."""
    return principal.isolated


def not_isolated(principal: Principal) -> bool:
    return not isolated(principal)


def tenant_records_reader(principal: Principal) -> bool:
    """May read the tenant's own records about its members (the erasure audit trail)."""
    return tenant_admin(principal) and not_isolated(principal)


def require(allowed: bool, message: str) -> None:
    """Refuse with ``FORBIDDEN`` and ``message`` unless ``allowed``."""
    if not allowed:
        raise Forbidden(message)
