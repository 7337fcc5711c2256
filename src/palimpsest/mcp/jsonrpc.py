"""What the SDK would drop without an answer, answered as JSON-RPC 2.0 asks, on both transports.

The SDK reads a message that does not parse, or whose ``id`` is neither a string nor an integer
(an object, a float, NaN, true, null), as nothing or as a notification, and answers nothing.
``triage`` looks at one message (a stdio line, an HTTP body) before the SDK does, parsing it
as the SDK does, and returns the error to answer with: ``-32700`` for what is not JSON,
``-32600`` for what is not one JSON-RPC message (batches included, as MCP has none), both with
``id: null``. The Palimpsest code is in ``error.data.code``, as for every refusal on ``/mcp``.
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from palimpsest.errors import ErrorCode


def error(rpc_code: int, message: str, code: ErrorCode, **details: Any) -> JSONRPCError:
    """A JSON-RPC error with no request id, carrying the Palimpsest code in ``data``."""
    data = {"code": code.value, **details}
    return JSONRPCError(
        jsonrpc="2.0", id=None, error=ErrorData(code=rpc_code, message=message, data=data)
    )


def encode(message: JSONRPCError) -> bytes:
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def triage(raw: str | bytes) -> JSONRPCError | None:
    """None when the SDK may take the message; else the error to answer it with."""
    try:
        value = pydantic_core.from_json(raw)
    except ValueError:
        return error(
            PARSE_ERROR, "not JSON: send one JSON-RPC 2.0 message", ErrorCode.INVALID_ARGUMENT
        )
    if not isinstance(value, dict):
        return error(
            INVALID_REQUEST,
            "a message is one JSON-RPC 2.0 object (batches are not supported)",
            ErrorCode.INVALID_ARGUMENT,
        )
    if "method" in value and "id" in value and not _is_request_id(value["id"]):
        # Read by the SDK as a notification, which gets no answer.
        return error(
            INVALID_REQUEST, "a request id is a string or an integer", ErrorCode.INVALID_ARGUMENT
        )
    try:
        jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return error(
            INVALID_REQUEST,
            "not a JSON-RPC 2.0 request, notification or response",
            ErrorCode.INVALID_ARGUMENT,
        )
    return None


def _is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
