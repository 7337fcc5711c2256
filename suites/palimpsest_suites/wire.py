"""A small asyncio HTTP/1.1 client for the security and load suites.

It keeps one connection alive per client, sends exactly the bytes it is given (so the suites
can send malformed bodies) and reads one response by Content-Length. It costs a fraction of a
general client's CPU per request, which matters when the load generator shares two cores with
the server it measures.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


class WireClient:
    """One keep-alive connection to ``host:port``; reconnects after a failure."""

    def __init__(self, host: str, port: int, timeout: float = 60.0) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    @classmethod
    def for_url(cls, url: str, timeout: float = 60.0) -> WireClient:
        host, _, port = url.removeprefix("http://").partition(":")
        return cls(host, int(port.rstrip("/")), timeout)

    async def post_graphql(
        self, query: str, variables: dict[str, Any] | None = None, token: str | None = None
    ) -> Reply:
        body = orjson.dumps({"query": query, "variables": variables or {}})
        return await self.request("POST", "/graphql", body, token)

    async def request(
        self, method: str, path: str, body: bytes = b"", token: str | None = None
    ) -> Reply:
        try:
            return await asyncio.wait_for(self._exchange(method, path, body, token), self.timeout)
        except BaseException:
            await self.close()  # never reuse a connection in an unknown state
            raise

    async def _exchange(self, method: str, path: str, body: bytes, token: str | None) -> Reply:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        head = [
            f"{method} {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
        ]
        if token is not None:
            head.append(f"Authorization: Bearer {token}")
        self._writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await self._writer.drain()
        status_line = await self._reader.readuntil(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        headers: dict[str, str] = {}
        while (line := await self._reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            payload = await self._read_chunked()
        else:
            payload = await self._reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Reply(status, headers, payload)

    async def _read_chunked(self) -> bytes:
        assert self._reader is not None
        parts: list[bytes] = []
        while True:
            size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self._reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await self._reader.readexactly(size))
            await self._reader.readexactly(2)

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
