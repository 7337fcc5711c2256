"""The MCP tool ``memory``: the command set of Claude's memory tool over the ``/memories`` tree
(docs/reference/memory-files.md). Thin over ``resolvers/documents/memory_files.py``: the same paths,
limits, words and error codes as GraphQL's ``memoryFile`` and ``updateMemoryFile``."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest.identity import Scope
from palimpsest.mcp.hints import writes
from palimpsest.mcp.render import plain
from palimpsest.mcp.strict_args import Int32
from palimpsest.mcp.tools import Caller, ScopeArg
from palimpsest.resolvers import documents as ops

CommandName = Literal["view", "create", "str_replace", "insert", "delete", "rename"]
Text = Annotated[str | None, Field(description="See `command`.")]

DESCRIPTION = (
    "Your memory as files under /memories, kept across conversations (each file is versioned). "
    "Commands: `view` (path; a directory lists files with sizes, a file shows numbered lines, "
    "`view_range` [start, end] picks lines, end -1 for the rest), `create` (path, file_text; "
    "refused if it exists), `str_replace` (path, old_str, new_str; old_str must occur exactly "
    "once), `insert` (path, insert_line: after which line, 0 for the top; insert_text), "
    "`delete` (path: a file or a directory), `rename` (old_path, new_path). Paths must stay "
    "inside /memories."
)


class MemoryFileResult(TypedDict):
    """What the memory tool shows the model, the canonical path it ended at, and the file's
    document (whose history ``document_history`` pages); the last two are absent for a
    directory view or a delete."""

    text: str
    path: NotRequired[str]
    document_id: NotRequired[str]


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the ``memory`` tool to ``server``."""

    @server.tool(
        description=DESCRIPTION,
        # delete, rename and str_replace end what a later view shows (history keeps it)
        annotations=writes(destructive=True, idempotent=False),
    )
    async def memory(
        ctx: Context,
        command: CommandName,
        path: Text = None,
        view_range: Annotated[
            list[Int32] | None,
            Field(description="view: [start, end], 1-based; end -1: to the end."),
        ] = None,
        file_text: Text = None,
        old_str: Text = None,
        new_str: Text = None,
        insert_line: Annotated[Int32 | None, Field(description="insert: after this line.")] = None,
        insert_text: Text = None,
        old_path: Text = None,
        new_path: Text = None,
        scope: ScopeArg = Scope.USER,
    ) -> MemoryFileResult:
        svc, who = await caller(ctx)
        cmd = ops.MemoryCommand(
            command,
            path=path,
            view_range=None if view_range is None else tuple(view_range),
            file_text=file_text,
            old_str=old_str,
            new_str=new_str,
            insert_line=insert_line,
            insert_text=insert_text,
            old_path=old_path,
            new_path=new_path,
        )
        answer: MemoryFileResult = plain(await ops.run(svc, who, scope, cmd))
        return answer
