"""GraphQL fields of memory as files (docs/reference/memory-files.md): view a path, and the
five edits of Claude's memory tool. Thin over ``resolvers/documents/memory_files.py``."""

from __future__ import annotations

from enum import Enum

import strawberry
from strawberry import ID

from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import EMBEDS, costs
from palimpsest.graphql.types import Scope
from palimpsest.resolvers import documents as ops


@strawberry.enum(description="An edit of the `/memories` tree, as Claude's memory tool names it.")
class MemoryFileEdit(Enum):
    CREATE = "create"
    STR_REPLACE = "str_replace"
    INSERT = "insert"
    DELETE = "delete"
    RENAME = "rename"


@strawberry.input(description="One edit; the fields its command names are required.")
class MemoryFileCommandInput:
    command: MemoryFileEdit
    path: str | None = strawberry.field(
        default=None, description="The file or directory (not for RENAME)."
    )
    file_text: str | None = strawberry.field(default=None, description="CREATE: the content.")
    old_str: str | None = strawberry.field(
        default=None, description="STR_REPLACE: the text to replace; it must occur exactly once."
    )
    new_str: str | None = strawberry.field(
        default=None, description="STR_REPLACE: its replacement (default empty)."
    )
    insert_line: int | None = strawberry.field(
        default=None, description="INSERT: the line after which to insert (0: at the top)."
    )
    insert_text: str | None = strawberry.field(default=None, description="INSERT: the text.")
    old_path: str | None = strawberry.field(default=None, description="RENAME: from.")
    new_path: str | None = strawberry.field(default=None, description="RENAME: to.")


@strawberry.type(description="What the memory tool shows the model, and where it ended.")
class MemoryFileAnswer:
    text: str
    path: str | None = strawberry.field(description="The canonical path.")
    document_id: ID | None = strawberry.field(
        description="The file's document (its history is `documentHistory`); null for a directory."
    )

    @classmethod
    def of(cls, a: ops.MemoryAnswer) -> MemoryFileAnswer:
        return cls(
            text=a.text,
            path=a.path,
            document_id=None if a.document_id is None else ID(a.document_id),
        )


@strawberry.type
class MemoryFileQuery:
    @strawberry.field(
        description="View a `/memories` path: a directory lists its files two levels deep "
        "with sizes; a file shows its lines numbered, or the lines `viewRange` names "
        "([start, end], 1-based, end -1 for the rest). A refused path is INVALID_ARGUMENT, a "
        "missing one NOT_FOUND."
    )
    async def memory_file(
        self, info: Info, scope: Scope, path: str, view_range: list[int] | None = None
    ) -> MemoryFileAnswer:
        c = info.context
        cmd = ops.MemoryCommand(
            "view", path=path, view_range=None if view_range is None else tuple(view_range)
        )
        return MemoryFileAnswer.of(await ops.run(c.services, c.principal, scope, cmd))


@strawberry.type
class MemoryFileMutation:
    @strawberry.mutation(
        description="Edit the `/memories` tree as Claude's memory tool does; each file is a "
        "document, and every edit a revision of it. `str_replace` with zero or several "
        "matches, and paths outside the tree, are INVALID_ARGUMENT and write nothing.",
        metadata=costs(EMBEDS),
    )
    async def update_memory_file(
        self, info: Info, scope: Scope, command: MemoryFileCommandInput
    ) -> MemoryFileAnswer:
        c = info.context
        cmd = ops.MemoryCommand(
            command.command.value,
            path=command.path,
            file_text=command.file_text,
            old_str=command.old_str,
            new_str=command.new_str,
            insert_line=command.insert_line,
            insert_text=command.insert_text,
            old_path=command.old_path,
            new_path=command.new_path,
        )
        return MemoryFileAnswer.of(await ops.run(c.services, c.principal, scope, cmd))
