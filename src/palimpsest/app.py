"""The Starlette application: lifespan (driver, schema, embedder), routes and middleware."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TypedDict

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from palimpsest import browser, logs, mcp, readiness
from palimpsest.config import Settings
from palimpsest.cypher.driver import causal
from palimpsest.errors import Unavailable
from palimpsest.graphql.limits import EdgeLimits
from palimpsest.graphql.metrics import OperationMetrics
from palimpsest.graphql.schema import build_schema
from palimpsest.graphql.view import (
    ASSETS_PATH,
    GraphQLView,
    PreparedDocument,
)
from palimpsest.identity.server_key import server_key
from palimpsest.identity.tokens import load_keys
from palimpsest.jobs.queue_metrics import QueueGauges, refreshing
from palimpsest.jobs.served_workers import ServedConsolidators
from palimpsest.middleware.access_log import AccessLog
from palimpsest.middleware.admission import Admission, Limits
from palimpsest.middleware.auth import TokenBackend, refuse
from palimpsest.middleware.bookmarks import CausalBookmarks
from palimpsest.middleware.ratelimit import AnonymousRateLimit, RateLimit
from palimpsest.resolvers.erasure import resume_pending
from palimpsest.resolvers.recall import RequestTiming
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest.warmup import Warmup

log = logging.getLogger("palimpsest.app")


class AppState(TypedDict):
    """What the lifespan yields; every request sees it as ``request.state``."""

    services: Services


async def _resume_erasures(services: Services) -> None:
    try:
        await resume_pending(services)
    except Exception as e:  # logged by kind only; the next start-up tries again
        log.error("resuming erasures failed: %s", type(e).__name__)


async def _after(first: asyncio.Task[None], then: Callable[[], None]) -> None:
    """``then()`` once ``first`` has ended, however it ended."""
    await asyncio.wait([first])
    then()


@contextmanager
def _start_up_frozen() -> Iterator[None]:
    """What start-up built (schema, model, driver, caches) lives as long as the server: keep
    it out of every garbage collection, which otherwise walks it again and again while a
    request allocates (docs/notes/search-latency.md has the measurement)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def create_app(settings: Settings | None = None, warmup: Warmup | None = None) -> Starlette:
    """``warmup``: start-up's warm-up (tests give one with a step of their own)."""
    settings = settings or Settings()
    warming = warmup or Warmup()
    schema = build_schema(extensions=[OperationMetrics, PreparedDocument])
    limits = EdgeLimits.of(settings)
    logs.configure(settings.log_level)
    keys = load_keys(settings)

    mcp_app, mcp_running = mcp.http_endpoint(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[AppState]:
        async with open_services(settings) as services, mcp_running():
            with metrics_listener(settings), _start_up_frozen():
                log.info("started neo4j=%s model=%s", settings.bolt_uri, settings.embedding.model)
                # /readyz says ready once it is done; /healthz answers all along.
                warm = asyncio.create_task(
                    warming.run(services, schema._schema, limits, settings.admission.warmup_seconds)
                )
                # Erasures this host left running finish in the background while it serves.
                resuming = asyncio.create_task(_resume_erasures(services))
                dev_secret = settings.auth.secret is None and not settings.auth.public_key_file
                if settings.sql.backend == "postgres" and dev_secret:
                    # Shared SQL means replicas; the dev secret is one machine's file.
                    log.warning(
                        "replicas on other machines will refuse this server's tokens: the "
                        "development token secret is local; set PALIMPSEST_TOKEN_SECRET"
                    )
                local_seal = settings.auth.server_secret is None and settings.auth.secret is None
                if settings.sql.backend == "postgres" and local_seal:
                    # Bookmarks are sealed with a key derived from the dev secret: one machine's.
                    log.warning(
                        "replicas will refuse each other's bookmarks: set "
                        "PALIMPSEST_SERVER_SECRET (or PALIMPSEST_TOKEN_SECRET)"
                    )
                # The in-process consolidator workers start once warm-up has ended.
                workers = ServedConsolidators(services, settings)
                starting = asyncio.create_task(_after(warm, workers.start))
                try:
                    async with refreshing(services, settings):
                        yield {"services": services}
                finally:
                    starting.cancel()
                    await workers.stop()
                    warm.cancel()
                    resuming.cancel()

    queue_count = QueueGauges(readiness.QUEUE_COUNT_SECONDS)

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        services: Services | None = getattr(request.state, "services", None)
        if services is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        if warming.state != "warm":
            body, status = readiness.warming(warming.wire())
        else:
            checks, cycle = await asyncio.gather(
                readiness.check(services), readiness.consolidators(services, queue_count)
            )
            body, status = readiness.report(checks, services.embedder.model_name)
            body["warmup"] = warming.wire()
            body["consolidators"] = cycle
            body["searchEngine"] = services.search_engine.wire()
        return JSONResponse(body, status_code=status)

    graphql = GraphQLView(schema, limits, settings.limits.graphql_document_cache)
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
        Middleware(AuthenticationMiddleware, backend=TokenBackend(keys), on_error=refuse),
        Middleware(
            RateLimit,
            rate=settings.admission.rate_limit_per_second,
            burst=settings.admission.rate_limit_burst,
        ),
        Middleware(
            AnonymousRateLimit,
            rate=settings.admission.anonymous_rate_limit_per_second,
            burst=settings.admission.anonymous_rate_limit_burst,
            exempt=frozenset({"/healthz", "/readyz"}),
        ),
        Middleware(CausalBookmarks, seal=causal.BookmarkSeal(server_key(settings, "bookmark"))),
        Middleware(
            Admission,
            limits=Limits(
                max_in_flight=settings.admission.max_in_flight,
                max_waiting=settings.admission.max_waiting,
                max_in_flight_per_principal=settings.admission.max_in_flight_per_principal,
                max_waiting_per_principal=settings.admission.max_waiting_per_principal,
                hold_seconds=settings.admission.request_timeout_seconds,
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
