"""Authentication: the bearer run token verified into a ``Principal`` on ``request.user``; a
bad token gets one ``401`` with a single ``UNAUTHENTICATED`` error, and nothing runs."""

from __future__ import annotations

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
)
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse, Response

from palimpsest.errors import ErrorCode, PalimpsestError
from palimpsest.identity import Principal
from palimpsest.identity.tokens import TokenKeys, VerifiedTokens


class AuthenticatedCaller(BaseUser):
    """What the authentication middleware puts on ``request.user``."""

    @property
    def is_authenticated(self) -> bool:
        return True

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def display_name(self) -> str:
        return self.principal.user_id or self.principal.agent_name or self.principal.tenant_id


class TokenBackend(AuthenticationBackend):
    def __init__(self, keys: TokenKeys) -> None:
        self.tokens = VerifiedTokens(keys)

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        header = conn.headers.get("authorization")
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError("use `Authorization: Bearer <run token>`")
        try:
            principal = self.tokens.verify(token.strip())
        except PalimpsestError as e:
            raise AuthenticationError(e.message) from e
        return AuthCredentials(["authenticated"]), AuthenticatedCaller(principal)


def refuse(_: HTTPConnection, exc: AuthenticationError) -> Response:
    # One clear error, shaped like a GraphQL response, and nothing runs.
    body = {"errors": [{"message": str(exc), "extensions": {"code": ErrorCode.UNAUTHENTICATED}}]}
    return JSONResponse(body, status_code=401)
