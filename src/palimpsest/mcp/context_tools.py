"""The MCP tool ``context``: the one call per turn, over ``resolvers/recall/context_block.py``
with the same scopes, limits and errors as the GraphQL field (docs/reference/context.md)."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.identity import Scope
from palimpsest.mcp.hints import READS
from palimpsest.mcp.strict_args import Int32
from palimpsest.mcp.tools import Caller, ScopeArg, TimeArg
from palimpsest.resolvers import recall as ops

Budget = Annotated[
    Int32,
    Field(
        description="The most tokens the block may hold, by the embedding model's tokenizer "
        "(the server caps it; 2000 by default)."
    ),
]


MinScore = Annotated[
    float | None,
    Field(
        description="Only hits that match well: leave out search hits whose cosine is below "
        "this (-1 to 1; a hit with no cosine stays only if its full-text rank is within the "
        "search's top_k). Pinned notes and facts about named entities always come. Default: "
        "the server's floor; -1 keeps every hit with a cosine."
    ),
]


class ContextResult(TypedDict):
    """The block of text, its tokens, whether something did not fit, and its pieces in order
    (kind pinned, fact or hit; source; scope; the id it cites; tokens; cut)."""

    text: str
    tokens: int
    truncated: bool
    items: list[dict[str, Any]]


def block_json(block: ops.ContextBlock) -> ContextResult:
    items = [
        {
            "kind": i.kind,
            "source": i.source.value,
            "scope": i.scope.value,
            "id": i.id,
            "tokens": i.tokens,
            "cut": i.cut,
        }
        for i in block.items
    ]
    return {
        "text": block.text,
        "tokens": block.tokens,
        "truncated": block.truncated,
        "items": items,
    }


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the ``context`` tool to ``server``."""

    @server.tool(
        description="Memory for your next turn in one block of text within a token budget: "
        "your pinned core notes first, then the current facts about the people and things "
        "the query names, then the best recall hits. Each line starts with the id it cites "
        "([note:key], [fact:id], [chunk:id]), a line break inside a piece written \\n; "
        "hits below `min_score` are left out; `truncated` says something did not fit.",
        annotations=READS,
    )
    async def context(
        ctx: Context,
        query: Annotated[str, Field(description="What the next turn is about, in plain words.")],
        scope: ScopeArg = Scope.USER,
        budget_tokens: Budget = ops.DEFAULT_BUDGET_TOKENS,
        also_scopes: Annotated[
            list[Scope] | None, Field(description="More scopes to read, after `scope`.")
        ] = None,
        as_of: TimeArg = None,
        known_at: TimeArg = None,
        min_score: MinScore = None,
    ) -> ContextResult:
        svc, who = await caller(ctx)
        block = await ops.context(
            svc,
            who,
            scope,
            query,
            budget_tokens,
            also_scopes or (),
            parse_optional(as_of, "as_of"),
            parse_optional(known_at, "known_at"),
            min_score,
        )
        return block_json(block)
