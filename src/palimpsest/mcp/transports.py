"""Who calls, per transport: stdio trusts ``PALIMPSEST_RUN_TOKEN``, HTTP the bearer header.

Either way the token is verified by the same code as for GraphQL (``identity.tokens.verify``),
at every call, so an expired token stops working mid-session. Over HTTP the endpoint sits behind
the API's authentication middleware, and a request without a verified token is refused with 401
before the MCP layer reads its body.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import orjson
from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from palimpsest import logs
from palimpsest.config import Settings
from palimpsest.errors import ErrorCode, Unauthenticated
from palimpsest.identity import Principal
from palimpsest.identity.tokens import load_keys, verify
from palimpsest.local import neo4j as neo4j_local
from palimpsest.mcp.edge import McpEdge
from palimpsest.mcp.server import build_server
from palimpsest.mcp.streams import EventStreams
from palimpsest.middleware.auth import AuthenticatedCaller
from palimpsest.resolvers.services import Services, acting_for
from palimpsest.runtime import open_services

PATH = "/mcp"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def run_stdio(settings: Settings, say: Callable[[str], None]) -> None:
    """Serve MCP on stdin/stdout for one agent run, as the run token in the settings."""
    logs.configure(settings.log_level)  # stderr only: stdout carries the protocol
    keys = load_keys(settings)
    if settings.run_token is None:
        raise Unauthenticated(
            "set PALIMPSEST_RUN_TOKEN to a run token (`palimpsest token mint ...`) for the MCP "
            "server to act as"
        )
    token = settings.run_token.get_secret_value()
    verify(keys, token)  # a bad token fails here, once, with its reason
    if settings.neo4j.starts_local:
        neo4j_local.start(settings, say=say)
    opened: dict[str, Services] = {}

    @asynccontextmanager
    async def lifespan(_: object) -> AsyncIterator[None]:
        async with open_services(settings) as services:
            opened["services"] = services
            yield None

    async def caller(_: Context) -> tuple[Services, Principal]:
        return opened["services"], acting_for(verify(keys, token))

    build_server(caller, lifespan=lifespan).run("stdio")


def http_endpoint(
    settings: Settings,
) -> tuple[ASGIApp, Callable[[], AbstractAsyncContextManager[None]]]:
    """The streamable-HTTP endpoint for the API app, and what its lifespan must run."""

    async def caller(ctx: Context) -> tuple[Services, Principal]:
        request: Any = ctx.request_context.request
        user = request.scope.get("user") if request is not None else None
        if not isinstance(user, AuthenticatedCaller):  # the guard below makes this unreachable
            raise Unauthenticated("send `Authorization: Bearer <run token>`")
        services: Services = request.state.services
        return services, acting_for(user.principal)

    server = build_server(caller)
    security = _security(settings)
    # Stateless: every request stands alone with its own bearer token; nothing to hijack.
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        host=settings.host,
        transport_security=security,
        # The edge enforces the same limit first, with a coded refusal.
        max_request_body_size=settings.limits.max_request_bytes,
    )
    manager = server.session_manager
    endpoint = McpEdge(StreamableHTTPASGIApp(manager), settings.limits.max_request_bytes, security)
    streams = EventStreams(
        endpoint,
        per_principal=settings.admission.mcp_max_streams_per_principal,
        total=settings.admission.mcp_max_streams,
        idle_seconds=settings.admission.mcp_stream_idle_seconds,
    )
    return RequireCaller(streams), manager.run


def _security(settings: Settings) -> TransportSecuritySettings | None:
    # On loopback, refuse other Host/Origin headers (DNS rebinding); elsewhere the bearer
    # token is what guards the endpoint.
    if settings.host not in _LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class RequireCaller:
    """401 for a request the authentication middleware did not verify; nothing is parsed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not isinstance(scope.get("user"), AuthenticatedCaller):
            body = orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": -32001,
                        "message": "send `Authorization: Bearer <run token>`",
                        "data": {"code": ErrorCode.UNAUTHENTICATED.value},
                    },
                }
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b"Bearer"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)
