"""The real app served by uvicorn on a thread, for the integration tests and the benchmarks."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from palimpsest.app import create_app
from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.warmup import Warmup


@contextmanager
def serve_in_thread(
    settings: Settings, timeout: float = 120.0, warmup: Warmup | None = None
) -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL (before start-up's warm-up is done:
    ``/readyz`` says when) and stops the server on exit."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    app = create_app(settings, warmup)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise Unavailable("the API did not start; is Neo4j running (palimpsest neo4j start)?")
        time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
