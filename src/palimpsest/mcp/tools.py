"""The memory as MCP tools: each one calls the same resolver as its GraphQL field.

Every tool takes the caller from ``Caller`` (the verified run token and the open services) and
passes it to a resolver, which decides the scope exactly as for GraphQL. Arguments are typed, so
the SDK publishes a JSON schema for each; descriptions are written for a model choosing a tool.
Results are plain JSON objects in snake_case, typed so the SDK publishes an output schema, and
every tool carries its hints (``hints.py``).

This module holds what the tools share (``Caller`` and the argument types) and the recall
tools; the other planes have a module each: ``note_tools``, ``document_tools``,
``fact_tools``, ``work_tools`` and ``sql_tools`` (``server.build_server`` registers them all).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.identity import Principal, Scope
from palimpsest.mcp import recall_args as rc
from palimpsest.mcp.hints import READS
from palimpsest.mcp.render import hit_json, plain
from palimpsest.resolvers import recall as asks
from palimpsest.resolvers.services import Services

Caller = Callable[[Context], Awaitable[tuple[Services, Principal]]]

ScopeArg = Annotated[
    Scope,
    Field(
        description="Whose memory: USER (the token's user, default), AGENT (this agent's own), "
        "TENANT (shared by the whole tenant) or GLOBAL (admins only). The owner always comes "
        "from the run token, never from arguments."
    ),
]
TimeArg = Annotated[
    str | None,
    Field(description="A date: YYYY, YYYY-MM, YYYY-MM-DD or RFC 3339 (e.g. 2024-05-01T12:00Z)."),
]
TopK = Annotated[int, Field(ge=1, le=asks.MAX_TOP_K, description="How many hits to return.")]
DedupArg = Annotated[
    float | None,
    Field(
        description="A cosine threshold: drop hits this close to a better one (each kept hit "
        "lists the ones it stood for under `duplicates`); default off."
    ),
]
SourceName = Literal["facts", "notes", "documents"]


class RecallResult(TypedDict):
    """Hits best first (kind, scope, id, text, score and how each leg ranked it), the scopes
    that were searched, and what the per-call controls did (null when none was given)."""

    hits: list[dict[str, Any]]
    scopes: list[str]
    controls: dict[str, Any] | None


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the recall tools to ``server``; ``caller`` says who calls and with which services."""

    @server.tool(
        description="Recall what is remembered about a question: facts and remembered values, "
        "ranked by meaning and words together. Each hit says its kind, scope and score.",
        annotations=READS,
    )
    async def recall(
        ctx: Context,
        query: Annotated[str, Field(description="What to recall, in plain words.")],
        scope: ScopeArg = Scope.USER,
        top_k: TopK = asks.DEFAULT_TOP_K,
        also_scopes: Annotated[
            list[Scope] | None, Field(description="More scopes to merge into the results.")
        ] = None,
        as_of: TimeArg = None,
        dedup: DedupArg = None,
        min_score: rc.MinScore = None,
        recency_half_life: rc.HalfLife = None,
        weights: rc.Weights = None,
        max_per_document: rc.PerDocument = None,
    ) -> RecallResult:
        more = asks.Controls.of(min_score, recency_half_life, weights, max_per_document)
        return await _recall(
            ctx, caller, query, scope, top_k, None, also_scopes, as_of, True, dedup, more
        )

    @server.tool(
        description="Search everything in a scope (facts, remembered values and imported "
        "document chunks) with the same ranking as recall; `sources` narrows the kinds.",
        annotations=READS,
    )
    async def search(
        ctx: Context,
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        scope: ScopeArg = Scope.USER,
        top_k: TopK = asks.DEFAULT_TOP_K,
        sources: Annotated[
            list[SourceName] | None, Field(description="Kinds of rows; default all three.")
        ] = None,
        also_scopes: Annotated[list[Scope] | None, Field(description="More scopes.")] = None,
        as_of: TimeArg = None,
        dedup: DedupArg = None,
        min_score: rc.MinScore = None,
        recency_half_life: rc.HalfLife = None,
        weights: rc.Weights = None,
        max_per_document: rc.PerDocument = None,
    ) -> RecallResult:
        more = asks.Controls.of(min_score, recency_half_life, weights, max_per_document)
        return await _recall(
            ctx, caller, query, scope, top_k, sources, also_scopes, as_of, False, dedup, more
        )


async def _recall(
    ctx: Context,
    caller: Caller,
    query: str,
    scope: Scope,
    top_k: int,
    sources: list[SourceName] | None,
    also_scopes: list[Scope] | None,
    as_of: str | None,
    recall_default: bool,
    dedup: float | None = None,
    controls: asks.Controls | None = None,
) -> RecallResult:
    svc, who = await caller(ctx)
    ask = asks.Ask(
        query=query,
        scope=scope,
        top_k=top_k,
        sources=sources,
        when=asks.When(as_of=parse_optional(as_of, "as_of")),
        also_scopes=also_scopes or (),
        dedup=dedup,
        controls=controls or asks.Controls(),
    )
    result = await (asks.recall if recall_default else asks.search)(svc, who, ask)
    return {
        "hits": [hit_json(h) for h in result.hits],
        "scopes": [s.value for s in result.scopes],
        "controls": plain(result.controls),  # what the per-call controls did (null: none given)
    }
