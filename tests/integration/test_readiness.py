"""``/readyz`` checks every configured backend and names the one that failed, and says
``warming`` until start-up's warm-up is done.

PostgreSQL is made unreachable for one app instance only: that app reaches the shared server
through a loopback forwarder this test owns, and closing the forwarder is PostgreSQL going
down for it (the shared server, which other tests use, never stops).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio.to_thread
import httpx
import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Statement
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.resolvers.services import Services
from palimpsest.server import serve_in_thread
from palimpsest.warmup import Warmup


class Forwarder:
    """A loopback TCP port that forwards to ``target`` while open; ``close`` drops every
    connection and refuses new ones, ``open`` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()

    def open(self) -> None:
        listener = socket.socket()
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.port))
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):  # the shutdown wakes the blocked accept
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()


@pytest.fixture
def forwarder(settings: Settings) -> Iterator[Forwarder]:
    f = Forwarder((settings.sql.postgres_host, settings.sql.postgres_port))
    f.open()
    yield f
    f.close()


def test_readyz_names_postgres_when_it_is_down(settings: Settings, forwarder: Forwarder) -> None:
    pg = settings.replace(sql_backend="postgres", postgres_port=forwarder.port)
    with serve_in_thread(pg) as url, httpx.Client(base_url=url, timeout=30) as http:
        up = http.get("/readyz")
        assert up.status_code == 200, up.text
        assert up.json()["status"] == "ready"
        assert up.json()["backends"] == {"neo4j": {"status": "ok"}, "postgres": {"status": "ok"}}

        forwarder.close()
        down = http.get("/readyz")
        assert down.status_code == 503
        body = down.json()
        assert body["status"] == "unavailable"
        assert body["failed"] == ["postgres"]
        assert body["backends"]["neo4j"] == {"status": "ok"}
        assert body["backends"]["postgres"] == {"status": "down", "code": "UNAVAILABLE"}
        # Nothing that locates or opens the database leaves: no port, host, user or password.
        text = down.text
        for secret in (str(forwarder.port), pg.sql.postgres_host, pg.sql.postgres_user, "password"):
            assert secret not in text
        assert http.get("/healthz").status_code == 200  # the process itself is fine

        forwarder.open()
        back = http.get("/readyz")
        assert back.status_code == 200, back.text
        assert back.json()["backends"]["postgres"] == {"status": "ok"}


def test_readyz_lists_the_sqlite_backend(http: httpx.Client) -> None:
    ready = http.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["backends"] == {"neo4j": {"status": "ok"}, "sqlite": {"status": "ok"}}


def _readyz_until(http: httpx.Client, done: Any, seconds: float = 240.0) -> httpx.Response:
    """``/readyz`` asked again until ``done(reply)``; the warm-up plans every statement,
    which on a busy machine takes a while (not a timed assertion: only a give-up)."""
    deadline = time.monotonic() + seconds
    while True:
        reply = http.get("/readyz")
        if done(reply) or time.monotonic() > deadline:
            return reply
        time.sleep(0.2)


@pytest.fixture
def warmup_logs() -> Iterator[list[str]]:
    """The warm-up's log lines (its own logger: the app's start-up replaces root handlers)."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Keep(level=logging.DEBUG)
    logger = logging.getLogger("palimpsest.warmup")
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


def test_readyz_says_warming_until_the_warm_up_is_done(
    settings: Settings, neo4j_driver: Driver
) -> None:
    # A step of the test's own, last, holds the warm-up open until the test lets it go: every
    # real step (every statement planned too) has run by the time only it is left.
    gate = threading.Event()

    async def held(_: Services) -> None:
        await anyio.to_thread.run_sync(gate.wait)

    warm = settings.replace(warmup_seconds=600.0, warmup_drive_seconds=1.0)
    warmup = Warmup(extra=[("held", held)])
    try:
        with (
            serve_in_thread(warm, warmup=warmup, warm=False) as url,
            httpx.Client(base_url=url, timeout=30) as http,
        ):
            first = http.get("/readyz")
            assert first.status_code == 503, first.text
            assert first.json()["status"] == "warming"
            assert "held" in first.json()["warmup"]["left"]
            assert http.get("/healthz").status_code == 200  # liveness never waits

            only_held = _readyz_until(http, lambda r: r.json()["warmup"]["left"] == ["held"])
            assert only_held.status_code == 503
            assert only_held.json() == {
                "status": "warming",
                "warmup": {"status": "warming", "left": ["held"]},
            }
            assert http.get("/healthz").status_code == 200

            gate.set()
            ready = _readyz_until(http, lambda r: r.status_code == 200)
            assert ready.status_code == 200, ready.text
            body = ready.json()
            assert body["status"] == "ready"
            assert body["warmup"]["status"] == "warm"
            assert body["warmup"]["skipped"] == []
    finally:
        gate.set()
    # The drive ran rounds (their reads found their writes: tests/integration/test_executor.py).
    assert warmup.drive_rounds >= len(warmup.lanes)
    # The rehearsed writes (a note, a fact) and the drive's were rolled back: the warm-up's
    # scopes hold nothing.
    for who in (warmup.principal, *warmup.lanes):
        assert who.user_id is not None
        key = scope_key(who.tenant_id, Scope.USER, who.user_id)
        for pattern in WARM_ROWS:
            records, _, _ = neo4j_driver.execute_query(pattern, key=key)
            assert records[0]["n"] == 0, pattern


WARM_ROWS = (
    "MATCH (n:Memory {scope_key: $key}) RETURN count(n) AS n",
    "MATCH (n:MemoryVersion {scope_key: $key}) RETURN count(n) AS n",
    "MATCH (n:Entity {scope_key: $key}) RETURN count(n) AS n",
    "MATCH (n:Document {scope_key: $key}) RETURN count(n) AS n",
    "MATCH (n:Chunk {scope_key: $key}) RETURN count(n) AS n",
    "MATCH (n:TermStats {scope_key: $key}) RETURN count(n) AS n",
    "MATCH ()-[f:FACT {scope_key: $key}]->() RETURN count(f) AS n",
)


BROKEN = Statement(
    "WARM_PROBE_UNPLANNABLE",
    "MATCH (m:Memory {scope_key: $scope_key}) RETURN m.key AS key ORDER BY",
)


def test_a_failed_warm_up_keeps_the_server_not_ready(
    settings: Settings, warmup_logs: list[str]
) -> None:
    # The statements to plan are the seam: one the real Neo4j cannot plan, after one it can.
    fine = Statement("WARM_PROBE_FINE", "MATCH (m:Memory {scope_key: $scope_key}) RETURN m.key")
    warm = settings.replace(warmup_seconds=600.0)
    warmup = Warmup(statements=[fine, BROKEN])
    with (
        serve_in_thread(warm, warmup=warmup, warm=False) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        failed = _readyz_until(http, lambda r: r.json()["status"] != "warming")
        assert failed.status_code == 503
        assert failed.json() == {
            "status": "unavailable",
            "warmup": {
                "status": "failed",
                "step": "statements",
                "name": "WARM_PROBE_UNPLANNABLE",
                "code": "Neo.ClientError.Statement.SyntaxError",
            },
        }
        assert http.get("/healthz").status_code == 200
        # It stays so: a failed warm-up is not retried into readiness.
        assert http.get("/readyz").status_code == 503
    failures = [line for line in warmup_logs if "warm-up failed" in line]
    assert failures == [
        "warm-up failed at statements: WARM_PROBE_UNPLANNABLE "
        "(Neo.ClientError.Statement.SyntaxError); the server stays not ready"
    ]
    assert not any("ORDER BY" in line for line in warmup_logs)  # never the statement's text


def test_readyz_without_a_warm_up(http: httpx.Client) -> None:
    # PALIMPSEST_WARMUP_SECONDS=0 (the suite's servers): ready at once, nothing warmed.
    ready = http.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["warmup"]["status"] == "warm"
    assert set(ready.json()["warmup"]["skipped"]) >= {"statements", "reads", "model"}
