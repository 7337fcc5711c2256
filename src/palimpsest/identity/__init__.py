"""Run identity: tokens to ``Principal``, and scope names to owners."""

from palimpsest.identity.principal import Origin, Principal, Role, Scope
from palimpsest.identity.scopes import Plane, ScopeRef, granted_scopes, resolve_scope

__all__ = [
    "Origin",
    "Plane",
    "Principal",
    "Role",
    "Scope",
    "ScopeRef",
    "granted_scopes",
    "resolve_scope",
]
