"""MCP tools over notes (key/value memory): remember, read, delete, history.

Each calls the resolver behind its GraphQL field (``memorySet``, ``memory``, ``memoryDelete``,
``memoryHistory``) with the same arguments, so scopes, limits and error codes are those of
GraphQL.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest.domain.time.timeparse import parse_optional as parse
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope
from palimpsest.mcp.hints import READS, writes
from palimpsest.mcp.render import plain
from palimpsest.mcp.strict_args import Int32
from palimpsest.mcp.tools import Caller, ScopeArg, TimeArg
from palimpsest.resolvers import notes

KeyArg = Annotated[str, Field(description="The key, 1-512 bytes.")]


class EntryResult(TypedDict):
    """The entry (key, value, scope, times, provenance), or null when there is none."""

    entry: dict[str, Any] | None


class DeleteResult(TypedDict):
    """False when there was no live entry to delete."""

    deleted: bool


class HistoryResult(TypedDict):
    """Versions newest first; pass `cursor` as `after` for the next page (null: no more)."""

    versions: list[dict[str, Any]]
    cursor: str | None


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the note tools to ``server``."""

    @server.tool(
        description="Remember a value under a key (replaces what was there). The value is any "
        "JSON; it is embedded so `recall` finds it by meaning. Use keys like 'prefs/editor'.",
        annotations=writes(destructive=True, idempotent=False),
    )
    async def remember(
        ctx: Context,
        key: KeyArg,
        value: Annotated[Any, Field(description="Any JSON value except null.")],
        scope: ScopeArg = Scope.USER,
        ttl_seconds: Annotated[
            Int32 | None,
            Field(ge=0, description="Forget after this many seconds (0/none: never)."),
        ] = None,
        pinned: Annotated[
            bool | None,
            Field(
                description="Pin it as a core note (`context` packs it first); false unpins; "
                "none keeps the key's current pin."
            ),
        ] = None,
    ) -> EntryResult:
        svc, who = await caller(ctx)
        if value is None:  # GraphQL's `value: JSON!` refuses it by type
            raise InvalidArgument("value must not be null; forget a key with memory_delete")
        entry = await notes.set_value(
            svc, who, scope, key, value, ttl_seconds, True, None, pinned=pinned
        )
        return {"entry": plain(entry)}

    @server.tool(
        description="Read the value remembered under a key (null when there is none). With "
        "known_at, read what the key held at that time: the version recorded then, even if "
        "it was changed or deleted since; as_of reads a dated value valid at that time.",
        annotations=READS,
    )
    async def memory_get(
        ctx: Context,
        key: KeyArg,
        scope: ScopeArg = Scope.USER,
        as_of: TimeArg = None,
        known_at: TimeArg = None,
    ) -> EntryResult:
        svc, who = await caller(ctx)
        entry = await notes.get(
            svc,
            who,
            scope,
            key,
            parse(as_of, "as_of"),
            parse(known_at, "known_at"),
        )
        return {"entry": plain(entry) if entry else None}

    @server.tool(
        description="Forget the value under a key. Its past versions stay readable with "
        "memory_history (erasure is what destroys them); deleted is false when nothing was "
        "there.",
        annotations=writes(destructive=True, idempotent=True),
    )
    async def memory_delete(
        ctx: Context, key: KeyArg, scope: ScopeArg = Scope.USER
    ) -> DeleteResult:
        svc, who = await caller(ctx)
        return {"deleted": await notes.delete(svc, who, scope, key)}

    @server.tool(
        description="Every version of a key, newest first: the current value, the values it "
        "replaced and the deletions (deleted: true, no value), each with when it was written "
        "(created_at) and replaced (expired_at). Page with the returned cursor.",
        annotations=READS,
    )
    async def memory_history(
        ctx: Context,
        key: KeyArg,
        scope: ScopeArg = Scope.USER,
        limit: Annotated[int, Field(ge=1, le=notes.MAX_HISTORY_LIMIT)] = 100,
        after: Annotated[str | None, Field(description="The cursor of the previous page.")] = None,
    ) -> HistoryResult:
        svc, who = await caller(ctx)
        found = await notes.history(svc, who, scope, key, limit, after)
        return {"versions": [plain(v) for v in found.items], "cursor": found.cursor}
