"""What the SDK would leave unanswered gets the JSON-RPC error the spec asks for, on stdio too."""

from __future__ import annotations

import io
from typing import Any

import pytest
from mcp_types import JSONRPCError

from palimpsest.mcp import jsonrpc
from palimpsest.mcp.stdio import TriagedLines

PING = '{"jsonrpc":"2.0","id":%s,"method":"ping"}'


def _answer(raw: str | bytes) -> dict[str, Any]:
    problem = jsonrpc.triage(raw)
    assert problem is not None
    body: dict[str, Any] = problem.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return body


@pytest.mark.parametrize("raw", ["garbage", "{", '{"jsonrpc":"2.0",', b"\xff\xfe", ""])
def test_what_does_not_parse_is_a_parse_error_with_a_null_id(raw: str | bytes) -> None:
    body = _answer(raw)
    assert body["id"] is None
    assert body["error"]["code"] == -32700
    assert body["error"]["data"] == {"code": "INVALID_ARGUMENT"}


@pytest.mark.parametrize("request_id", ['{"a":1}', "1.5", "NaN", "Infinity", "true", "null", "[]"])
def test_a_request_id_that_is_not_a_string_or_an_integer_is_an_invalid_request(
    request_id: str,
) -> None:
    body = _answer(PING % request_id)
    assert body["id"] is None
    assert body["error"]["code"] == -32600
    assert body["error"]["data"] == {"code": "INVALID_ARGUMENT"}


@pytest.mark.parametrize(
    "raw",
    [
        "[]",
        "[" + PING % 1 + "]",  # MCP has no batches
        "42",
        '"ping"',
        '{"jsonrpc":"1.0","id":1,"method":"ping"}',
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}',
    ],
)
def test_what_is_not_one_message_is_an_invalid_request(raw: str) -> None:
    body = _answer(raw)
    assert (body["id"], body["error"]["code"]) == (None, -32600)


@pytest.mark.parametrize(
    "raw",
    [
        PING % 1,
        PING % '"abc"',
        PING % str(2**70),  # JSON integers of any size, as the SDK reads them
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":1,"result":{}}',
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"client could not parse"}}',
    ],
)
def test_messages_the_sdk_answers_pass(raw: str) -> None:
    assert jsonrpc.triage(raw) is None


def test_stdin_lines_are_triaged_in_order_and_only_good_ones_reach_the_sdk() -> None:
    source = io.BytesIO(
        b"garbage\n\n   \n"
        + (PING % '{"a":1}').encode()
        + b"\n\xff\xfe\n"
        + (PING % 7).encode()
        + b"\n"
        + (PING % "1.5").encode()
        + b"\n"
    )
    refused: list[JSONRPCError | None] = []
    lines = TriagedLines(source, refused.append)
    assert lines.readline() == PING % 7 + "\n"
    assert [p.error.code for p in refused if p is not None] == [-32700, -32600, -32700]
    assert lines.readline() == ""  # end of input, after the last line's answer
    assert [p.error.code if p else None for p in refused[3:]] == [-32600, None]
