"""``palimpsest serve``: check the ports, start Neo4j, listen, and only then say where to go."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable

import uvicorn

from palimpsest.app import create_app
from palimpsest.cli.apps import err
from palimpsest.config import Settings
from palimpsest.identity.lifetimes import DEFAULT_TTL_SECONDS, lifetime
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.local import neo4j as neo4j_local
from palimpsest.local.graphiql import install_assets
from palimpsest.local.ports import require_free
from palimpsest.ontology import extractors
from palimpsest.runtime import check_configured_model


def _managed(settings: Settings) -> bool:
    return settings.neo4j.starts_local


def serve_api(settings: Settings) -> None:
    # A taken API port is found before anything starts or is printed.
    require_free(settings.host, {settings.port: "PALIMPSEST_PORT or --port"})
    if _managed(settings):
        neo4j_local.start(settings, say=err)
    if settings.sql.backend == "postgres" and settings.sql.postgres_managed:
        from palimpsest.local import postgres as postgres_local

        postgres_local.start(settings, say=err)
    # The app's start-up would refuse the same in uvicorn's lifespan, as a traceback.
    asyncio.run(check_configured_model(settings))
    if settings.queue.serve_consolidators:
        extractors.load(
            settings.queue.extractor_names
        )  # an unknown name: one line, not a traceback
    install_assets(settings.graphiql_dir, settings.local.npm_registry_url)
    config = uvicorn.Config(
        create_app(settings), host=settings.host, port=settings.port, log_level="warning"
    )
    server = _AnnouncingServer(config, lambda: announce(settings))
    try:
        server.run()
    finally:
        if _managed(settings) and neo4j_local.status(settings).running:
            err("Neo4j keeps running; stop it with `palimpsest neo4j stop`")


def announce(settings: Settings) -> None:
    """What a person needs once the API listens: URLs, a token, where the password is."""
    err(f"GraphiQL: http://{settings.host}:{settings.port}/graphql")
    if settings.auth.secret is None and settings.auth.public_key_file is None:
        issued = int(time.time())
        token = mint(
            load_keys(settings),
            tenant="dev",
            user="dev-user",
            agent="dev-agent",
            ttl_seconds=DEFAULT_TTL_SECONDS,
            now=issued,
        )
        lives = lifetime(DEFAULT_TTL_SECONDS, issued + DEFAULT_TTL_SECONDS)
        err(
            f"development token (tenant dev, user dev-user, agent dev-agent; lives {lives}; "
            f"a longer one: palimpsest token mint --ttl SECONDS):\n{token}"
        )
    if _managed(settings):
        where = (
            "PALIMPSEST_NEO4J_PASSWORD"
            if settings.neo4j.password is not None
            else str(settings.neo4j_home / "password")
        )
        s = neo4j_local.status(settings)
        err(f"Neo4j Browser: {s.browser_url} (user {settings.neo4j.user}, password in {where})")
    else:
        err(f"Neo4j: {settings.bolt_uri}")
    if settings.metrics_port is not None:
        err(f"metrics: http://{settings.metrics_host}:{settings.metrics_port}/metrics")
    workers = settings.queue.serve_consolidators
    if workers:
        err(f"consolidators: {workers} worker(s) here turn harvested spans into memory")
    else:
        err("consolidators: none here (PALIMPSEST_SERVE_CONSOLIDATORS=0); run `consolidate`")
    err("Ready. Ctrl-C stops the API.")


class _AnnouncingServer(uvicorn.Server):
    """uvicorn, calling ``on_listen`` once its sockets listen (not before, not on failure)."""

    def __init__(self, config: uvicorn.Config, on_listen: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_listen = on_listen

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and not self.should_exit:
            self._on_listen()
