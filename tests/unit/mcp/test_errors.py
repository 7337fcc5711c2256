"""Tool failures keep the API's codes and leak nothing unexpected (in-process SDK client)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from mcp.types import TextContent

from palimpsest.errors import Forbidden
from palimpsest.identity import Principal
from palimpsest.mcp import build_server
from palimpsest.resolvers.services import Services


def _server(failure: Exception) -> Any:
    async def caller(_: Context) -> tuple[Services, Principal]:
        raise failure

    return build_server(caller)


async def _error(server: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with Client(server) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    assert isinstance(result.content[0], TextContent)
    assert result.content[0].text.startswith(error["code"] + ": ")
    return error


async def test_a_refusal_keeps_its_code_message_and_details() -> None:
    server = _server(Forbidden("scope AGENT needs an agent in the token", scope="AGENT"))
    error = await _error(server, "remember", {"key": "k", "value": 1})
    assert error == {
        "code": "FORBIDDEN",
        "message": "scope AGENT needs an agent in the token",
        "scope": "AGENT",
    }


async def test_an_unexpected_failure_is_internal_and_masked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = _server(RuntimeError("connection to secret-host:7687 with password hunter2"))
    with caplog.at_level(logging.INFO):
        error = await _error(server, "recall", {"query": "anything"})
    assert error["code"] == "INTERNAL"
    assert "secret" not in str(error)
    assert error["message"] == f"internal error (request id {error['requestId']})"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert error["requestId"] in logged
    assert "hunter2" not in logged


async def test_arguments_outside_the_schema_are_invalid_argument_naming_the_fields() -> None:
    server = _server(AssertionError("never called"))
    error = await _error(server, "recall", {"query": "x", "top_k": 500, "scope": "NOBODY"})
    assert error["code"] == "INVALID_ARGUMENT"
    assert error["fields"] == ["scope", "top_k"]


async def test_an_unknown_tool_is_invalid_argument() -> None:
    error = await _error(_server(AssertionError("never called")), "forget_everything", {})
    assert error["code"] == "INVALID_ARGUMENT"
