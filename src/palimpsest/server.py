"""The real app served by uvicorn on a thread, for the integration tests and the benchmarks."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from palimpsest.app import create_app
from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.warmup import Warmup


@contextmanager
def serve_in_thread(
    settings: Settings,
    timeout: float = 120.0,
    warmup: Warmup | None = None,
    *,
    warm: bool = True,
) -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL and stops the server on exit.
    ``warm``: first wait until start-up's warm-up has ended (a benchmark measures a ready
    server, and its figures do not share the CPU with the warm-up)."""
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
    url = f"http://127.0.0.1:{port}"
    if warm:
        _wait_warm(url, thread, time.monotonic() + settings.admission.warmup_seconds + timeout)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _wait_warm(url: str, thread: threading.Thread, deadline: float) -> None:
    """Until ``/readyz`` no longer says ``warming`` (ready, or not ready for a reason the
    caller may be testing)."""
    while thread.is_alive() and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=5) as reply:  # noqa: S310
                body = reply.read()
        except urllib.error.HTTPError as e:
            body = e.read()
        except OSError:
            body = b"{}"
        if json.loads(body or b"{}").get("status") != "warming":
            return
        time.sleep(0.1)
