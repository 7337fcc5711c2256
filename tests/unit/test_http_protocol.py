"""``OneWriteProtocol`` on a real served socket: a sized response's head and body in one
transport write, streams and HEAD answers unheld, keep-alive and pipelining intact."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from palimpsest.http_protocol import PROTOCOL, OneWriteProtocol

RELEASE = threading.Event()


async def small(_: Request) -> Response:
    return JSONResponse({"data": {"memory": {"value": {"n": 1}}}})


async def stream(_: Request) -> Response:
    async def events() -> AsyncIterator[bytes]:
        await asyncio.to_thread(RELEASE.wait, 5)  # the first event waits for the test
        yield b"data: one\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def broken(_: Request) -> Response:
    class Fails(Response):
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            raise RuntimeError("after the head")

    return Fails(b"never sent")


APP = Starlette(
    routes=[
        Route("/small", small, methods=["GET", "HEAD"]),
        Route("/stream", stream),
        Route("/broken", broken),
    ]
)


def counting(base: type[HttpToolsProtocol]) -> tuple[type[HttpToolsProtocol], list[bytes]]:
    """``base`` whose connections record every transport write (what reaches ``send``)."""
    writes: list[bytes] = []

    class Counted:
        def __init__(self, transport: Any) -> None:
            self._transport = transport

        def write(self, data: bytes) -> None:
            writes.append(bytes(data))
            self._transport.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._transport, name)

    class Protocol(base):  # type: ignore[valid-type,misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.transport = Counted(transport)

    return Protocol, writes


@contextmanager
def served(protocol: type[HttpToolsProtocol]) -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    config = uvicorn.Config(
        APP, host="127.0.0.1", port=port, log_level="critical", lifespan="off", http=protocol
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def request(path: str, method: str = "GET") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nhost: t\r\n\r\n".encode()


def read_responses(conn: socket.socket, count: int) -> list[bytes]:
    """``count`` whole responses (each sized by its content-length) off one connection."""
    data, out = b"", list[bytes]()
    while len(out) < count:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            head = data[:head_end].decode().lower()
            length = int(head.split("content-length: ")[1].split("\r\n")[0])
            end = head_end + 4 + length
            if len(data) >= end:
                out.append(data[:end])
                data = data[end:]
                continue
        chunk = conn.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    return out


def test_a_small_response_is_one_write_and_keep_alive_holds() -> None:
    protocol, writes = counting(OneWriteProtocol)
    with served(protocol) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(5)
        for _ in range(3):  # one connection, one request after another
            conn.sendall(request("/small"))
            (response,) = read_responses(conn, 1)
            assert response.startswith(b"HTTP/1.1 200 OK\r\n")
            assert response.endswith(b'{"data":{"memory":{"value":{"n":1}}}}')
    assert len(writes) == 3
    assert all(w.startswith(b"HTTP/1.1 200 OK\r\n") and w.endswith(b"}}}}") for w in writes)


def test_without_the_protocol_the_same_response_takes_two_writes() -> None:
    """What the lever removes: uvicorn's own protocol writes the head, then the body."""
    protocol, writes = counting(HttpToolsProtocol)
    with served(protocol) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(5)
        conn.sendall(request("/small"))
        read_responses(conn, 1)
    assert len(writes) == 2
    assert writes[0].endswith(b"\r\n\r\n")
    assert writes[1].endswith(b"}}}}")


def test_pipelined_requests_are_answered_in_order_one_write_each() -> None:
    protocol, writes = counting(OneWriteProtocol)
    with served(protocol) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(5)
        conn.sendall(request("/small") + request("/nowhere") + request("/small"))
        responses = read_responses(conn, 3)
    assert [r.split(b"\r\n")[0] for r in responses] == [
        b"HTTP/1.1 200 OK",
        b"HTTP/1.1 404 Not Found",
        b"HTTP/1.1 200 OK",
    ]
    assert len(writes) == 3


def test_a_stream_sends_its_headers_before_its_first_event() -> None:
    """A chunked response is not held: the client sees the head while the app waits."""
    RELEASE.clear()
    protocol, writes = counting(OneWriteProtocol)
    with served(protocol) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(5)
        conn.sendall(request("/stream"))
        head = conn.recv(65536)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"transfer-encoding: chunked" in head
        assert head.endswith(b"\r\n\r\n")
        RELEASE.set()
        rest = b""
        while not rest.endswith(b"0\r\n\r\n"):
            rest += conn.recv(65536)
        assert b"data: one" in rest
    assert writes[0] == head


def test_a_head_request_gets_its_head() -> None:
    """A HEAD's body part is never written, so its head is not held for one."""
    with served(OneWriteProtocol) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(5)
        conn.sendall(request("/small", "HEAD") + request("/small"))
        data = b""
        while data.count(b"HTTP/1.1 200 OK") < 2 or not data.endswith(b"}}}}"):
            data += conn.recv(65536)
    first, second = data.split(b"HTTP/1.1 200 OK")[1:]
    assert first.endswith(b"\r\n\r\n")
    assert b"content-length: 37" in first
    assert second.endswith(b"}}}}")


def test_an_app_failing_after_its_head_still_sends_the_head_and_closes() -> None:
    with served(OneWriteProtocol) as port, socket.create_connection(("127.0.0.1", port)) as conn:
        conn.settimeout(5)
        conn.sendall(request("/broken"))
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert data.endswith(b"\r\n\r\n")


@pytest.mark.parametrize("name", [PROTOCOL])
def test_the_import_string_names_the_protocol(name: str) -> None:
    config = uvicorn.Config(APP, http=name)
    config.load()
    assert config.http_protocol_class is OneWriteProtocol
