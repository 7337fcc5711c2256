"""Tool arguments are strict JSON: a boolean is not an integer, unknown arguments are refused,
integers stay within GraphQL's Int, and the published schemas say so (in-process SDK client)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import Context

from palimpsest.errors import Forbidden
from palimpsest.identity import Principal
from palimpsest.mcp import build_server
from palimpsest.mcp.strict_args import INT_MAX, INT_MIN
from palimpsest.resolvers.services import Services

REACHED = Forbidden("the arguments passed")


def _server() -> Any:
    async def caller(_: Context) -> tuple[Services, Principal]:
        raise REACHED  # so a call that got past the arguments says so, with its own code

    return build_server(caller)


async def _error(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with Client(_server()) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    return error


CHUNK = {"id": "c" * 32, "text": "x"}


@pytest.mark.parametrize(
    ("tool", "arguments", "fields"),
    [
        ("chunk_update", {**CHUNK, "revision": True}, ["revision"]),
        ("chunk_update", {**CHUNK, "revision": False}, ["revision"]),
        ("chunk_update", {**CHUNK, "revision": "1"}, ["revision"]),
        ("chunk_update", {**CHUNK, "revision": 1.5}, ["revision"]),
        ("chunk_update", {**CHUNK, "revision": 2**64}, ["revision"]),
        ("chunk_update", {**CHUNK, "revision": 2**63}, ["revision"]),
        ("chunk_update", {**CHUNK, "revision": INT_MAX + 1}, ["revision"]),
        ("chunk_update", {**CHUNK, "revision": -(2**70)}, ["revision"]),
        ("restore_document", {"id": "d" * 32, "revision": True}, ["revision"]),
        ("document_diff", {"id": "d", "from_revision": True, "to_revision": 2}, ["from_revision"]),
        ("document_history", {"id": "d", "limit": True}, ["limit"]),
        ("memory_history", {"key": "k", "limit": "5"}, ["limit"]),
        ("remember", {"key": "k", "value": 1, "pinned": 1}, ["pinned"]),
        ("remember", {"key": "k", "value": 1, "pinned": "true"}, ["pinned"]),
        ("remember", {"key": 7, "value": 1}, ["key"]),
        ("recall", {"query": "x", "min_score": True}, ["min_score"]),
        ("recall", {"query": "x", "weights": {"vector": True}}, ["weights.vector"]),
        ("memory", {"command": "view", "path": "/memories", "view_range": [1, True]}, None),
        ("facts", {"include_retired": 0}, ["include_retired"]),
    ],
)
async def test_values_of_the_wrong_json_type_are_refused(
    tool: str, arguments: dict[str, Any], fields: list[str] | None
) -> None:
    error = await _error(tool, arguments)
    assert error["code"] == "INVALID_ARGUMENT", error
    if fields is not None:
        assert error["fields"] == fields


@pytest.mark.parametrize(
    ("tool", "arguments", "fields"),
    [
        ("chunk_update", {**CHUNK, "revision": 1, "colour": "red"}, ["colour"]),
        ("document_get", {"id": "d", "owner": "someone-else"}, ["owner"]),
        ("remember", {"key": "k", "value": 1, "user_id": "u"}, ["user_id"]),
        (
            "assert_facts",
            {"facts": [{"subject": {"type": "a", "name": "b", "x": 1}, "predicate": "p"}]},
            ["facts.0.subject.x"],
        ),
        ("sql_exec", {"statements": [{"statement": "SELECT 1", "tenant": "t"}]}, None),
        ("harvest", {"compaction_generation": 0, "spans": [{"text": "t", "who": "x"}]}, None),
    ],
)
async def test_unknown_arguments_are_refused(
    tool: str, arguments: dict[str, Any], fields: list[str] | None
) -> None:
    error = await _error(tool, arguments)
    assert error["code"] == "INVALID_ARGUMENT", error
    if fields is not None:
        assert error["fields"] == fields


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("chunk_update", {**CHUNK, "revision": INT_MAX}),
        ("chunk_update", {**CHUNK, "revision": 1, "scope": "TENANT"}),
        ("recall", {"query": "x", "also_scopes": ["AGENT"], "min_score": 0, "dedup": 1}),
        ("search", {"query": "x", "sources": '["notes"]'}),  # a list sent as a JSON string
        ("remember", {"key": "k", "value": {"n": 2**70, "b": True, "f": 1.5}, "pinned": True}),
        ("assert_facts", {"facts": [{"subject": {"type": "a", "name": "b"}, "predicate": "p"}]}),
    ],
)
async def test_well_typed_arguments_still_pass(tool: str, arguments: dict[str, Any]) -> None:
    assert (await _error(tool, arguments))["code"] == "FORBIDDEN"


def _walk(node: Any, path: str, found: list[str]) -> None:
    if isinstance(node, dict):
        if node.get("type") == "integer":
            low, high = node.get("minimum"), node.get("maximum")
            if low is None or high is None or low < INT_MIN or high > INT_MAX:
                found.append(f"{path}: an integer beyond GraphQL's Int")
        if "properties" in node and node.get("additionalProperties") is not False:
            found.append(f"{path}: an object that takes unknown properties")
        for key, value in node.items():
            _walk(value, f"{path}/{key}", found)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk(value, f"{path}/{i}", found)


async def test_every_published_schema_is_closed_and_its_integers_bounded() -> None:
    async with Client(_server()) as client:
        tools = (await client.list_tools()).tools
    found: list[str] = []
    for tool in tools:
        assert tool.input_schema["additionalProperties"] is False, tool.name
        _walk(tool.input_schema, tool.name, found)
    assert found == []


def _arguments(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What the tool's function would be called with."""
    server = _server()
    checked: dict[str, Any] = server._tool_manager.get_tool(tool).fn_metadata.validate_arguments(
        arguments
    )
    return checked


@pytest.mark.parametrize("text", ['{"a":1}', "[1,2]", "null", "true", "7", '"quoted"'])
def test_an_argument_that_takes_text_keeps_json_text_as_written(text: str) -> None:
    memory = {"command": "create", "path": "/memories/a.json", "file_text": text}
    assert _arguments("memory", memory)["file_text"] == text  # str | None
    assert _arguments("remember", {"key": "k", "value": text})["value"] == text  # Any
    assert _arguments("context", {"budget_tokens": 10, "query": text})["query"] == text  # str


def test_a_list_or_an_object_sent_as_json_text_is_still_read() -> None:
    assert _arguments("search", {"query": "x", "sources": '["notes"]'})["sources"] == ["notes"]
    weights = _arguments("recall", {"query": "x", "weights": '{"vector": 2}'})["weights"]
    assert weights.vector == 2


@pytest.mark.parametrize(
    ("tool", "arguments", "fields"),
    [
        # Only a list or an object is read from a string: not null, a number or a boolean.
        ("recall", {"query": "x", "weights": "null"}, ["weights"]),
        ("recall", {"query": "x", "min_score": "null"}, ["min_score"]),
        ("remember", {"key": "k", "value": 1, "pinned": "null"}, ["pinned"]),
        ("search", {"query": "x", "sources": "notes"}, ["sources"]),
    ],
)
async def test_other_json_text_for_a_non_text_argument_is_refused(
    tool: str, arguments: dict[str, Any], fields: list[str]
) -> None:
    error = await _error(tool, arguments)
    assert error["code"] == "INVALID_ARGUMENT", error
    assert error["fields"] == fields
