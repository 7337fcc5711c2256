"""``/readyz`` checks every configured backend and names the one that failed.

PostgreSQL is made unreachable for one app instance only: that app reaches the shared server
through a loopback forwarder this test owns, and closing the forwarder is PostgreSQL going
down for it (the shared server, which other tests use, never stops).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest

from palimpsest.config import Settings
from palimpsest.server import serve_in_thread


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
    f = Forwarder((settings.postgres_host, settings.postgres_port))
    f.open()
    yield f
    f.close()


def test_readyz_names_postgres_when_it_is_down(settings: Settings, forwarder: Forwarder) -> None:
    pg = settings.model_copy(update={"sql_backend": "postgres", "postgres_port": forwarder.port})
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
        for secret in (str(forwarder.port), pg.postgres_host, pg.postgres_user, "password"):
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
