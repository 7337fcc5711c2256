"""Claude's memory tool over Palimpsest (``integrations.anthropic``) against a stub server:
each SDK command is one GraphQL call with the server's command shape, and a refusal is the
SDK's ``ToolError`` carrying the server's code and words."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from palimpsest.client.transport import Transport
from palimpsest.integrations.anthropic import EDIT, VIEW, PalimpsestMemoryTool


class Server:
    def __init__(self, refuse: str | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.refuse = refuse

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if self.refuse:
            error = {
                "message": "File /memories/a already exists",
                "extensions": {"code": self.refuse},
            }
            return httpx.Response(200, json={"errors": [error]})
        field = "memoryFile" if body["query"] == VIEW else "updateMemoryFile"
        return httpx.Response(200, json={"data": {field: {"text": f"answer {len(self.requests)}"}}})


def tool(server: Server, scope: str = "USER") -> PalimpsestMemoryTool:
    made = PalimpsestMemoryTool(url="http://s", token="tok", scope=scope)
    made.close()
    made.transport = Transport(
        "http://s", "tok", http=httpx.Client(transport=httpx.MockTransport(server))
    )
    return made


def test_view_reads_the_file_with_its_range() -> None:
    server = Server()
    with tool(server, "AGENT") as t:
        got = t.view(
            BetaMemoryTool20250818ViewCommand(command="view", path="/memories/a", view_range=[2, 5])
        )
    assert got == "answer 1"
    [request] = server.requests
    assert request["query"] == VIEW
    assert request["variables"] == {"scope": "AGENT", "path": "/memories/a", "range": [2, 5]}


def test_each_edit_sends_the_servers_command_shape() -> None:
    server = Server()
    with tool(server) as t:
        t.create(
            BetaMemoryTool20250818CreateCommand(
                command="create", path="/memories/a", file_text="hi"
            )
        )
        t.str_replace(
            BetaMemoryTool20250818StrReplaceCommand(
                command="str_replace", path="/memories/a", old_str="hi", new_str="ho"
            )
        )
        t.insert(
            BetaMemoryTool20250818InsertCommand(
                command="insert", path="/memories/a", insert_line=1, insert_text="x"
            )
        )
        t.rename(
            BetaMemoryTool20250818RenameCommand(
                command="rename", old_path="/memories/a", new_path="/memories/b"
            )
        )
        last = t.delete(BetaMemoryTool20250818DeleteCommand(command="delete", path="/memories/b"))
    assert last == "answer 5"
    assert {r["query"] for r in server.requests} == {EDIT}
    assert {r["variables"]["scope"] for r in server.requests} == {"USER"}
    assert [r["variables"]["command"] for r in server.requests] == [
        {"command": "CREATE", "path": "/memories/a", "fileText": "hi"},
        {"command": "STR_REPLACE", "path": "/memories/a", "oldStr": "hi", "newStr": "ho"},
        {"command": "INSERT", "path": "/memories/a", "insertLine": 1, "insertText": "x"},
        {"command": "RENAME", "oldPath": "/memories/a", "newPath": "/memories/b"},
        {"command": "DELETE", "path": "/memories/b"},
    ]


def test_a_refusal_is_a_tool_error_with_the_servers_code_and_words() -> None:
    with tool(Server(refuse="CONFLICT")) as t, pytest.raises(ToolError) as caught:
        t.create(
            BetaMemoryTool20250818CreateCommand(command="create", path="/memories/a", file_text="x")
        )
    assert str(caught.value) == "CONFLICT: File /memories/a already exists"
