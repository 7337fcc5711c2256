"""uvicorn's httptools protocol, writing a sized response's head and first body part at once.

uvicorn writes a response's status line and headers when the app sends
``http.response.start`` and its body when the app sends ``http.response.body``: two socket
writes (two ``send`` syscalls, and on loopback the receiver's TCP work twice) for every small
JSON answer, 13-18 % of a key/value or SQL read's API CPU (docs/notes/load.md). Here the head
of a response that declares its ``content-length`` waits for the first body part and both go
out in one write. A response without a length (chunked: a stream, such as MCP's event
stream) and the answer to a HEAD (no body part is written) send their head at once, as
before, so a stream's headers still reach the client before its first event.

Serve with ``uvicorn.Config(http=OneWriteProtocol)`` or ``uvicorn --http
palimpsest.http_protocol:OneWriteProtocol``.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

PROTOCOL = "palimpsest.http_protocol:OneWriteProtocol"


class _HeldHead:
    """The cycle's transport: holds a sized response's head until its first body write.

    The cycle (uvicorn's) writes through ``write``, ``close`` and ``is_closing`` only; its
    own state says which write is the head: the first one after the response started.
    """

    __slots__ = ("_cycle", "_head", "_seen", "_transport")

    def __init__(self, transport: Any, cycle: RequestResponseCycle) -> None:
        self._transport = transport
        self._cycle = cycle
        self._head: bytes | None = None
        self._seen = False

    def write(self, data: bytes) -> None:
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head + data)
            return
        cycle = self._cycle
        if not self._seen and cycle.response_started:
            self._seen = True
            # Sized and with a body part to come: hold it (a HEAD's body is never written).
            if cycle.chunked_encoding is False and cycle.scope["method"] != "HEAD":
                self._head = data
                return
        self._transport.write(data)

    def close(self) -> None:
        # The app failed between start and body: the head goes out as it would have.
        head = self._head
        if head is not None:
            self._head = None
            self._transport.write(head)
        self._transport.close()

    def is_closing(self) -> bool:
        return bool(self._transport.is_closing())


class OneWriteProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` whose every request cycle writes through a ``_HeldHead``."""

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        # Pipelined requests start here too, each when the one before it has completed.
        cycle.transport = _HeldHead(cycle.transport, cycle)  # type: ignore[assignment]
        super()._start_asgi_task(cycle, app)
