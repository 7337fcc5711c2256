"""``palimpsest mcp``'s stdio: the SDK's transport, with every line it would drop answered.

The SDK's stdin reader turns a line that does not parse into an exception the server only
logs, and a request with an object, float or NaN id into a notification: neither is answered,
and the client waits forever. Here stdin is read through ``TriagedLines``, which hands the SDK
only the lines ``jsonrpc.triage`` lets through and puts the error for each other line on the
server's own output stream, in order with its other messages. Blank lines are skipped.
"""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import TYPE_CHECKING, BinaryIO

import anyio
import anyio.from_thread
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import PARSE_ERROR, JSONRPCError

from palimpsest.errors import ErrorCode
from palimpsest.mcp import jsonrpc

if TYPE_CHECKING:  # the SDK's stream protocols (mcp==2.3.0 keeps them in a private module)
    from mcp.shared._stream_protocols import ReadStream, WriteStream

    Streams = tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]
# How long answers to the last lines may take to go out once stdin has ended.
_DRAIN_SECONDS = 2.0


class TriagedLines(TextIOWrapper):
    """Lines of ``source`` the SDK can take; the error for every other line goes to ``refuse``.

    ``readline`` runs on a worker thread (``anyio.wrap_file``); ``refuse`` is called there.
    """

    def __init__(self, source: BinaryIO, refuse: Callable[[JSONRPCError | None], None]) -> None:
        super().__init__(source, encoding="utf-8")
        self.source, self.refuse = source, refuse

    # The same signature as TextIOWrapper's, which typeshed marks as overriding ``_IOBase``'s.
    def readline(self, size: int = -1, /) -> str:  # type: ignore[override]
        while raw := self.source.readline():
            if not raw.strip():
                continue
            try:
                line = raw.decode()
            except UnicodeDecodeError:
                problem: JSONRPCError | None = jsonrpc.error(
                    PARSE_ERROR,
                    "not UTF-8: send one JSON-RPC 2.0 message",
                    ErrorCode.INVALID_ARGUMENT,
                )
            else:
                problem = jsonrpc.triage(line)
            if problem is None:
                return line
            self.refuse(problem)
        self.refuse(None)  # end of input
        return ""


@asynccontextmanager
async def triaged_stdio(source: BinaryIO | None = None) -> AsyncIterator[Streams]:
    """``stdio_server``'s streams, reading ``source`` (default: stdin) through ``TriagedLines``."""
    to_answer, refusals = anyio.create_memory_object_stream[JSONRPCError](math.inf)

    def refuse(problem: JSONRPCError | None) -> None:
        if problem is None:
            anyio.from_thread.run_sync(to_answer.close)
        else:
            anyio.from_thread.run_sync(to_answer.send_nowait, problem)

    lines = TriagedLines(source or sys.stdin.buffer, refuse)
    async with (
        stdio_server(stdin=anyio.wrap_file(lines)) as (read_stream, write_stream),
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(_answer, refusals, write_stream)
        yield read_stream, write_stream
        tg.cancel_scope.deadline = anyio.current_time() + _DRAIN_SECONDS


async def _answer(
    refusals: MemoryObjectReceiveStream[JSONRPCError], out: WriteStream[SessionMessage]
) -> None:
    async with refusals:
        async for problem in refusals:
            try:
                await out.send(SessionMessage(problem))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
