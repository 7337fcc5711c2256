"""Claude's memory tool backed by Palimpsest: ``PalimpsestMemoryTool`` answers the Anthropic
SDK's typed memory commands against a running server (docs/reference/memory-files.md).

It is a ``BetaAbstractMemoryTool``, so ``client.beta.messages.tool_runner(tools=[tool])``
runs it as it runs the SDK's local filesystem tool; every command is one GraphQL call to the
server's ``memoryFile`` / ``updateMemoryFile``, where the paths are checked and every file is a
versioned document of the token's scope. A refusal becomes the SDK's ``ToolError`` carrying
the server's message (the memory tool's own words), so the model sees it as a tool error.
Needs the client distribution's extra ``anthropic`` (``pip install './client[anthropic]'``).
"""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from palimpsest.client.transport import RetryPolicy, Transport
from palimpsest.errors import PalimpsestError

VIEW = """
query($scope: Scope!, $path: String!, $range: [Int!]) {
  memoryFile(scope: $scope, path: $path, viewRange: $range) { text }
}"""
EDIT = """
mutation($scope: Scope!, $command: MemoryFileCommandInput!) {
  updateMemoryFile(scope: $scope, command: $command) { text }
}"""


class PalimpsestMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over a Palimpsest server at ``url`` with the run token ``token``;
    files live in ``scope`` (USER: the token's user; AGENT: this agent's own)."""

    def __init__(
        self,
        *,
        url: str,
        token: str,
        scope: str = "USER",
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__()
        self.scope = scope
        # The client's transport: the token, bounded retries of UNAVAILABLE and 429, and the
        # bookmark that lets a view read the edit before it.
        self.transport = Transport(url, token, policy=retry, timeout=timeout)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> PalimpsestMemoryTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, document: str, variables: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.transport.post(document, variables)
        except PalimpsestError as e:
            raise ToolError(f"{e.code.value}: {e.message}") from e

    def _view(self, path: str, view_range: list[int] | None) -> str:
        variables = {"scope": self.scope, "path": path, "range": view_range}
        return str(self._call(VIEW, variables)["memoryFile"]["text"])

    def _edit(self, command: dict[str, Any]) -> str:
        variables = {"scope": self.scope, "command": command}
        return str(self._call(EDIT, variables)["updateMemoryFile"]["text"])

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._view(command.path, command.view_range)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._edit(
            {"command": "CREATE", "path": command.path, "fileText": command.file_text}
        )

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._edit(
            {
                "command": "STR_REPLACE",
                "path": command.path,
                "oldStr": command.old_str,
                "newStr": command.new_str,
            }
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._edit(
            {
                "command": "INSERT",
                "path": command.path,
                "insertLine": command.insert_line,
                "insertText": command.insert_text,
            }
        )

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._edit({"command": "DELETE", "path": command.path})

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._edit(
            {"command": "RENAME", "oldPath": command.old_path, "newPath": command.new_path}
        )
