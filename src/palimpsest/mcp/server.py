"""The MCP server (official ``mcp`` SDK): the memory as tools, over stdio or streamable HTTP.

Errors keep the API's codes. A refusal (``PalimpsestError``) comes back as a tool error whose
text starts with the code and whose structured content is ``{"error": {"code", "message",
...details}}``; arguments that do not fit the tool's schema, parsed strictly and with no
argument it does not name (``strict_args``), are ``INVALID_ARGUMENT`` naming the fields;
anything unexpected is ``INTERNAL`` with a request id that is also logged, and nothing else of
it leaves the server. Messages are logged by code only, never with arguments.
"""

from __future__ import annotations

import logging
import traceback
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent
from pydantic import ValidationError

from palimpsest import __version__
from palimpsest.errors import ErrorCode, PalimpsestError
from palimpsest.mcp import (
    context_tools,
    document_tools,
    fact_tools,
    memory_tools,
    note_tools,
    sql_tools,
    strict_args,
    tools,
    work_tools,
)
from palimpsest.mcp.stdio import triaged_stdio
from palimpsest.mcp.tools import Caller

log = logging.getLogger("palimpsest.mcp")
Lifespan = Callable[[MCPServer[Any]], AbstractAsyncContextManager[Any]]

INSTRUCTIONS = (
    "Long-term memory for this agent run. `remember` stores a value under a key and `recall` "
    "finds what was remembered (and stated as facts) by meaning; `search` also reaches "
    "imported documents. Scopes: USER (default) is the user's memory, AGENT this agent's own, "
    "TENANT shared by everyone in the tenant. Errors start with a code such as FORBIDDEN or "
    "INVALID_ARGUMENT."
)


class MemoryServer(MCPServer[Any]):
    """``MCPServer`` whose tool failures carry Palimpsest's error codes."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            return _coded(name, e)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop, with every line it would leave unanswered answered."""
        async with triaged_stdio() as (read_stream, write_stream):
            lowlevel = self._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def build_server(caller: Caller, lifespan: Lifespan | None = None) -> MemoryServer:
    server = MemoryServer(
        name="palimpsest",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        lifespan=lifespan,
    )
    planes = (
        note_tools,
        tools,
        context_tools,
        document_tools,
        memory_tools,
        fact_tools,
        work_tools,
        sql_tools,
    )
    for plane in planes:
        plane.register(server, caller)
    for tool in server._tool_manager.list_tools():
        strict_args.harden(tool)
    return server


def error_result(code: ErrorCode, message: str, **details: Any) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=f"{code.value}: {message}")],
        structured_content={"error": {"code": code.value, "message": message, **details}},
        is_error=True,
    )


def _coded(tool: str, error: ToolError) -> CallToolResult:
    cause = error.__cause__
    # The SDK wraps a tool's own exception once or twice; the first non-ToolError is ours.
    while isinstance(cause, ToolError) and cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, PalimpsestError):
        log.info("refused tool=%s code=%s", tool, cause.code.value)
        return error_result(cause.code, cause.message, **cause.details)
    if isinstance(cause, ValidationError):
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in cause.errors()})
        log.info("invalid arguments tool=%s fields=%s", tool, fields)
        return error_result(
            ErrorCode.INVALID_ARGUMENT,
            f"arguments do not fit the tool's schema: {', '.join(fields)}",
            fields=fields,
        )
    if cause is None:
        # The SDK's own refusals: an unknown tool, or arguments it could not read.
        log.info("invalid call tool=%s", tool)
        return error_result(ErrorCode.INVALID_ARGUMENT, str(error))
    request_id = uuid.uuid4().hex[:12]
    where = " <- ".join(
        f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
        for frame in reversed(traceback.extract_tb(cause.__traceback__)[-4:])
    )
    log.error(
        "internal error request_id=%s tool=%s type=%s at %s",
        request_id,
        tool,
        type(cause).__name__,
        where,
    )
    return error_result(
        ErrorCode.INTERNAL, f"internal error (request id {request_id})", requestId=request_id
    )
