"""Run tokens: signed JWTs minted by the agent runtime and verified here.

HS256 with a shared secret of at least 32 bytes, or EdDSA with a public key. Every failure,
whatever its cause, leaves as one ``Unauthenticated`` error with a short reason; the token
itself is never logged or echoed.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import jwt

from palimpsest.config import Settings
from palimpsest.errors import Unauthenticated
from palimpsest.identity.lifetimes import DEFAULT_TTL_SECONDS
from palimpsest.identity.names import user_id_fault
from palimpsest.identity.principal import Principal, Role, Scope

E = TypeVar("E", Role, Scope)

_REQUIRED = ["exp", "iat", "iss", "aud", "tenant"]
# NumericDate claims must be JSON numbers; PyJWT alone would also take numeric strings.
_TIME_CLAIMS = ("exp", "iat", "nbf")
_MIN_SECRET_BYTES = 32


@dataclass(frozen=True, slots=True)
class TokenKeys:
    """What verifies (and, with a secret, signs) run tokens."""

    algorithm: str
    verify_key: str | bytes
    sign_key: str | bytes | None
    issuer: str
    audience: str
    leeway_seconds: int
    max_token_bytes: int = 8192


def load_keys(settings: Settings) -> TokenKeys:
    """Build the token keys; a development secret is made once under ``settings.home``."""
    common = {
        "issuer": settings.auth.issuer,
        "audience": settings.auth.audience,
        "leeway_seconds": settings.auth.leeway_seconds,
        "max_token_bytes": settings.auth.max_bytes,
    }
    if settings.auth.public_key_file is not None:
        pem = settings.auth.public_key_file.read_bytes()
        return TokenKeys(algorithm="EdDSA", verify_key=pem, sign_key=None, **common)  # type: ignore[arg-type]
    if settings.auth.secret is not None:
        secret = settings.auth.secret.get_secret_value().encode()
    else:
        secret = dev_secret(settings)
    return TokenKeys(algorithm="HS256", verify_key=secret, sign_key=secret, **common)  # type: ignore[arg-type]


def dev_secret(settings: Settings) -> bytes:
    """The development secret under ``settings.home``, made once (never for production)."""
    path = settings.dev_secret_file
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(48))
    secret = path.read_text().strip().encode()
    if len(secret) < _MIN_SECRET_BYTES:
        raise Unauthenticated(f"development secret in {path} is shorter than 32 bytes")
    return secret


def mint(
    keys: TokenKeys,
    *,
    tenant: str,
    user: str | None = None,
    agent: str | None = None,
    session: str | None = None,
    run: str | None = None,
    model: str | None = None,
    roles: Iterable[Role] = (),
    memory_scopes: Iterable[Scope] | None = None,
    sql_scopes: Iterable[Scope] | None = None,
    isolated: bool = False,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    now: float | None = None,
) -> str:
    """Sign a run token (development and tests; production tokens come from the runtime)."""
    if keys.sign_key is None:
        raise Unauthenticated("this server only holds a public key and cannot mint tokens")
    issued = int(now if now is not None else time.time())
    claims: dict[str, Any] = {
        "iss": keys.issuer,
        "aud": keys.audience,
        "iat": issued,
        "exp": issued + ttl_seconds,
        "tenant": tenant,
        "session": session or f"ses_{secrets.token_hex(6)}",
        "run": run or f"run_{secrets.token_hex(6)}",
        "roles": sorted(r.value for r in roles),
        "isolated": isolated,
    }
    optional = {"user": user, "agent": agent, "model": model}
    claims.update({k: v for k, v in optional.items() if v is not None})
    if memory_scopes is not None:
        claims["memory_scopes"] = sorted(s.value for s in memory_scopes)
    if sql_scopes is not None:
        claims["sql_scopes"] = sorted(s.value for s in sql_scopes)
    return jwt.encode(claims, keys.sign_key, algorithm=keys.algorithm)


def verify(keys: TokenKeys, token: str) -> Principal:
    """Verify signature, issuer, audience and expiry; build the ``Principal``."""
    return principal_from_claims(verified_claims(keys, token))


def verified_claims(keys: TokenKeys, token: str) -> dict[str, Any]:
    """The claims of a token whose signature, issuer, audience and expiry verify."""
    if len(token) > keys.max_token_bytes:
        # Refused before any decoding: a huge token costs base64 and JSON work to reject.
        raise Unauthenticated(f"run token is longer than {keys.max_token_bytes} bytes")
    try:
        claims = jwt.decode(
            token,
            keys.verify_key,
            algorithms=[keys.algorithm],
            audience=keys.audience,
            issuer=keys.issuer,
            leeway=keys.leeway_seconds,
            options={"require": _REQUIRED},
        )
    except jwt.ExpiredSignatureError as e:
        raise Unauthenticated("run token has expired") from e
    except jwt.InvalidAudienceError as e:
        raise Unauthenticated("run token is for another audience") from e
    except jwt.InvalidIssuerError as e:
        raise Unauthenticated("run token has the wrong issuer") from e
    except jwt.InvalidSignatureError as e:
        raise Unauthenticated("run token signature does not verify") from e
    except jwt.PyJWTError as e:
        raise Unauthenticated("run token is malformed or unsigned") from e
    for name in _TIME_CLAIMS:
        value = claims.get(name)
        if name in claims and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise Unauthenticated(f"run token claim {name!r} must be a number (seconds)")
    return claims


class VerifiedTokens:
    """Principals of recently verified tokens, each until its token expires. A runtime sends
    the same run token with every call of a run, and checking its signature again is
    Python work on every request. Keyed by the exact token text, so a token that
    differs by one byte is verified afresh; expiry is judged as ``verify`` judges it."""

    def __init__(
        self, keys: TokenKeys, size: int = 10_000, clock: Callable[[], float] = time.time
    ) -> None:
        self.keys = keys
        self._size = size
        self._clock = clock
        self._known: OrderedDict[str, tuple[Principal, float]] = OrderedDict()

    def verify(self, token: str) -> Principal:
        hit = self._known.get(token)
        if hit is not None and self._clock() < hit[1] + self.keys.leeway_seconds:
            self._known.move_to_end(token)
            return hit[0]
        self._known.pop(token, None)
        claims = verified_claims(self.keys, token)
        principal = principal_from_claims(claims)
        if self._size:
            self._known[token] = (principal, float(claims["exp"]))
            while len(self._known) > self._size:
                self._known.popitem(last=False)
        return principal


def principal_from_claims(claims: Mapping[str, Any]) -> Principal:
    tenant = _text(claims, "tenant", required=True)
    assert tenant is not None
    return Principal(
        tenant_id=tenant,
        user_id=_user(claims),
        agent_name=_text(claims, "agent"),
        session_id=_text(claims, "session"),
        run_id=_text(claims, "run"),
        model=_text(claims, "model"),
        roles=frozenset(_enum_list(claims, "roles", Role) or ()),
        memory_scopes=_enum_list(claims, "memory_scopes", Scope),
        sql_scopes=_enum_list(claims, "sql_scopes", Scope),
        isolated=_flag(claims, "isolated"),
    )


def _text(claims: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = claims.get(name)
    if value is None or value == "":
        if required:
            raise Unauthenticated(f"run token lacks the {name!r} claim")
        return None
    if not isinstance(value, str) or len(value) > 256 or "\x1f" in value:
        raise Unauthenticated(f"run token claim {name!r} must be a short string")
    return value


def _user(claims: Mapping[str, Any]) -> str | None:
    """The ``user`` claim, by the rule an admin naming a user is held to (``names``)."""
    value = _text(claims, "user")
    fault = None if value is None else user_id_fault(value)
    if fault is not None:
        raise Unauthenticated(f"run token claim 'user' {fault}")
    return value


def _flag(claims: Mapping[str, Any], name: str) -> bool:
    value = claims.get(name, False)
    if not isinstance(value, bool):
        raise Unauthenticated(f"run token claim {name!r} must be a boolean")
    return value


def _enum_list(claims: Mapping[str, Any], name: str, kind: type[E]) -> frozenset[E] | None:
    value = claims.get(name)
    if value is None:
        return None
    if not isinstance(value, list):
        raise Unauthenticated(f"run token claim {name!r} must be a list")
    try:
        # Scope names are upper case on the wire; accept either spelling in tokens.
        normal = [v.upper() if kind is Scope else v.lower() for v in value]
        return frozenset(kind(v) for v in normal)
    except (ValueError, AttributeError) as e:
        # Fail closed: an unknown grant or role is refused, never ignored.
        raise Unauthenticated(f"run token claim {name!r} holds an unknown value") from e
