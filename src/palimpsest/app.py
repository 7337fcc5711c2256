"""The Starlette application: lifespan (driver, schema, embedder), routes and middleware."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
)
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from palimpsest import browser, logs, mcp
from palimpsest.admission import Admission, Limits
from palimpsest.config import Settings
from palimpsest.cypher import causal
from palimpsest.errors import ErrorCode, PalimpsestError, Unavailable
from palimpsest.graphql.limits import EdgeLimits
from palimpsest.graphql.metrics import OperationMetrics
from palimpsest.graphql.schema import build_schema
from palimpsest.graphql.view import (
    ASSETS_PATH,
    AuthenticatedCaller,
    GraphQLView,
    PreparedDocument,
)
from palimpsest.identity.server_key import server_key
from palimpsest.identity.tokens import TokenKeys, VerifiedTokens, load_keys
from palimpsest.queue_metrics import refreshing
from palimpsest.ratelimit import AnonymousRateLimit, RateLimit
from palimpsest.recall_timing import RequestTiming
from palimpsest.resolvers.erasure import resume_pending
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services

log = logging.getLogger("palimpsest.app")


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


def _refuse(_: HTTPConnection, exc: AuthenticationError) -> Response:
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


async def _resume_erasures(services: Services) -> None:
    try:
        await resume_pending(services)
    except Exception as e:  # logged by kind only; the next start-up tries again
        log.error("resuming erasures failed: %s", type(e).__name__)


class CausalBookmarks:
    """Opens the sealed ``X-Palimpsest-Bookmark`` into the request's causal scope and returns
    the bookmarks the request ended with, sealed for the same caller, in the same header (see
    cypher/causal.py). After authentication: a seal is bound to the verified principal."""

    def __init__(self, app: ASGIApp, seal: causal.BookmarkSeal) -> None:
        self.app = app
        self.seal = seal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal = getattr(scope.get("user"), "principal", None)
        try:
            given = self.seal.open(Headers(scope=scope).get(causal.HEADER), principal)
        except PalimpsestError as e:
            body = {"errors": [{"message": e.message, "extensions": {"code": e.code}}]}
            await JSONResponse(body, status_code=400)(scope, receive, send)
            return
        with causal.request_scope(given) as seen:

            async def with_bookmarks(message: Message) -> None:
                if message["type"] == "http.response.start" and seen.seen:
                    value = self.seal.seal(seen.seen, principal)
                    MutableHeaders(scope=message).append(causal.HEADER, value)
                await send(message)

            await self.app(scope, receive, with_bookmarks)


@contextmanager
def _start_up_frozen() -> Iterator[None]:
    """What start-up built (schema, model, driver, caches) lives as long as the server: keep
    it out of every garbage collection, which otherwise walks it again and again while a
    request allocates (a full-text leg of 38k rows: 274 -> 190 ms of Python CPU)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def create_app(settings: Settings | None = None) -> Starlette:
    settings = settings or Settings()
    logs.configure(settings.log_level)
    keys = load_keys(settings)

    mcp_app, mcp_running = mcp.http_endpoint(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_services(settings) as services, mcp_running():
            app.state.services = services
            with metrics_listener(settings), _start_up_frozen():
                log.info("ready neo4j=%s model=%s", settings.bolt_uri, settings.embedding_model)
                # Erasures this host left running finish in the background while it serves.
                resuming = asyncio.create_task(_resume_erasures(services))
                dev_secret = settings.token_secret is None and not settings.token_public_key_file
                if settings.sql_backend == "postgres" and dev_secret:
                    # Shared SQL means replicas; the dev secret is one machine's file.
                    log.warning(
                        "replicas on other machines will refuse this server's tokens: the "
                        "development token secret is local; set PALIMPSEST_TOKEN_SECRET"
                    )
                async with refreshing(services, settings):
                    yield
                resuming.cancel()

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

    schema = build_schema(extensions=[OperationMetrics, PreparedDocument])
    graphql = GraphQLView(schema, EdgeLimits.of(settings), settings.graphql_document_cache)
    routes = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Mount(ASSETS_PATH, app=StaticFiles(directory=settings.graphiql_dir, check_dir=False)),
        # Every method reaches the view, so even a PUT is refused with a coded JSON 405.
        Route("/graphql", graphql),
        Route(browser.GUIDE_PATH, browser.guide_page, methods=["GET", "OPTIONS"]),
        Route(browser.STYLE_PATH, browser.style_file, methods=["GET", "OPTIONS"]),
        # MCP over streamable HTTP: behind the same token middleware as /graphql. Every method
        # reaches the endpoint, so a PUT too is refused with a coded JSON-RPC error.
        Route(mcp.PATH, mcp_app),
    ]
    middleware = [
        Middleware(RequestTiming),
        Middleware(AccessLog),
        Middleware(AuthenticationMiddleware, backend=TokenBackend(keys), on_error=_refuse),
        Middleware(RateLimit, rate=settings.rate_limit_per_second, burst=settings.rate_limit_burst),
        Middleware(
            AnonymousRateLimit,
            rate=settings.anonymous_rate_limit_per_second,
            burst=settings.anonymous_rate_limit_burst,
            exempt=frozenset({"/healthz", "/readyz"}),
        ),
        Middleware(CausalBookmarks, seal=causal.BookmarkSeal(server_key(settings, "bookmark"))),
        Middleware(
            Admission,
            limits=Limits(
                max_in_flight=settings.max_in_flight,
                max_waiting=settings.max_waiting,
                max_in_flight_per_principal=settings.max_in_flight_per_principal,
                max_waiting_per_principal=settings.max_waiting_per_principal,
                hold_seconds=settings.request_timeout_seconds,
            ),
            routes={"/graphql": frozenset({"GET", "POST"}), mcp.PATH: frozenset({"POST"})},
        ),
    ]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def metrics_app() -> Starlette:
    """Prometheus metrics alone: they count every tenant's traffic, so never on the API port."""

    async def metrics(_: Request) -> Response:
        return PlainTextResponse(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return Starlette(routes=[Route("/metrics", metrics)])


@contextmanager
def metrics_listener(settings: Settings) -> Iterator[None]:
    """Serve ``/metrics`` on ``metrics_host:metrics_port`` while the API runs (off when unset)."""
    if settings.metrics_port is None:
        yield
        return
    import uvicorn

    config = uvicorn.Config(
        metrics_app(),
        host=settings.metrics_host,
        port=settings.metrics_port,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    # Its own thread and loop: uvicorn only takes over signals on the main thread.
    thread = threading.Thread(target=server.run, name="metrics", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        raise Unavailable(
            f"metrics listener could not start on {settings.metrics_host}:{settings.metrics_port}"
        )
    log.info("metrics on http://%s:%s/metrics", settings.metrics_host, settings.metrics_port)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)
