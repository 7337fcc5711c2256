"""The Starlette application: lifespan (driver, schema, embedder), routes and middleware."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
)
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from palimpsest import browser, logs, mcp
from palimpsest.config import Settings
from palimpsest.errors import ErrorCode, PalimpsestError
from palimpsest.graphql.metrics import OperationMetrics
from palimpsest.graphql.schema import build_schema
from palimpsest.graphql.view import ASSETS_PATH, AuthenticatedCaller, GraphQLView
from palimpsest.identity.tokens import TokenKeys, load_keys, verify
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services

log = logging.getLogger("palimpsest.app")


class TokenBackend(AuthenticationBackend):
    def __init__(self, keys: TokenKeys) -> None:
        self.keys = keys

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        header = conn.headers.get("authorization")
        if header is None:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError("use `Authorization: Bearer <run token>`")
        try:
            principal = verify(self.keys, token.strip())
        except PalimpsestError as e:
            raise AuthenticationError(e.message) from e
        return AuthCredentials(["authenticated"]), AuthenticatedCaller(principal)


def _refuse(_: HTTPConnection, exc: Exception) -> Response:
    # One clear error, shaped like a GraphQL response, and nothing runs.
    body = {"errors": [{"message": str(exc), "extensions": {"code": ErrorCode.UNAUTHENTICATED}}]}
    return JSONResponse(body, status_code=401)


class AccessLog:
    """Method, path, status and time; never the query string, body or headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            log.info(
                "%s %s %s %.1fms",
                scope["method"],
                scope["path"],
                status,
                (time.perf_counter() - started) * 1000,
            )


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings or Settings()
    logs.configure(settings.log_level)
    keys = load_keys(settings)

    mcp_app, mcp_running = mcp.http_endpoint(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_services(settings) as services, mcp_running():
            app.state.services = services
            log.info("ready neo4j=%s model=%s", settings.bolt_uri, settings.embedding_model)
            yield

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        services: Services | None = getattr(request.app.state, "services", None)
        if services is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        try:
            await services.db.ping()
        except Exception:
            log.warning("readiness: neo4j unreachable")
            return JSONResponse({"status": "neo4j unreachable"}, status_code=503)
        return JSONResponse({"status": "ready", "model": services.embedder.model_name})

    async def metrics(_: Request) -> Response:
        return PlainTextResponse(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    schema = build_schema(extensions=[OperationMetrics])
    graphql = GraphQLView(schema)
    routes = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics),
        Route(browser.GUIDE_PATH, browser.guide_page, methods=["GET", "OPTIONS"]),
        Route(browser.STYLE_PATH, browser.style_file, methods=["GET", "OPTIONS"]),
        Mount(ASSETS_PATH, app=StaticFiles(directory=settings.graphiql_dir, check_dir=False)),
        Route("/graphql", graphql, methods=["GET", "POST"]),
        # MCP over streamable HTTP: behind the same token middleware as /graphql.
        Route(mcp.PATH, mcp_app, methods=["GET", "POST", "DELETE"]),
    ]
    middleware = [
        Middleware(AccessLog),
        Middleware(AuthenticationMiddleware, backend=TokenBackend(keys), on_error=_refuse),
    ]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
