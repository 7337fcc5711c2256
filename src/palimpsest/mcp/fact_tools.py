"""MCP tools over facts: assert, list, history, supersede, retract.

Each calls the resolver behind its GraphQL field (``assertFacts``, ``facts``, ``factHistory``,
``supersedeFact``, ``retractFact``) with the same arguments; limits are the resolver's.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest import paging
from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.identity import Scope
from palimpsest.mcp.hints import READS, writes
from palimpsest.mcp.render import fact_json, plain
from palimpsest.mcp.strict_args import Int32, ToolInput
from palimpsest.mcp.tools import Caller, ScopeArg, TimeArg
from palimpsest.resolvers import facts as fact_ops
from palimpsest.resolvers import tenant
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef

FactId = Annotated[str, Field(description="A fact id (assert_facts and facts answer them).")]
Limit = Annotated[Int32, Field(description=f"Page size, at most {fact_ops.MAX_LIST_LIMIT}.")]
After = Annotated[str | None, Field(description="The cursor of the previous page.")]


class Entity(ToolInput):
    type: str = Field(description="Entity type, e.g. person, service, city.")
    name: str = Field(description="Entity name as written; matching ignores case and spacing.")


class Source(ToolInput):
    chunk_id: str = Field(description="A document chunk id in the same scope.")
    start: Int32 = Field(description="Start offset of the quoted span in the chunk's text.")
    end: Int32 = Field(description="End offset (exclusive).")


class FactItem(ToolInput):
    subject: Entity
    predicate: str = Field(description="A short verb phrase, e.g. 'works at', 'lives in'.")
    object: Entity | None = Field(default=None, description="The object entity, or use value.")
    value: str | None = Field(default=None, description="A literal object instead of an entity.")
    text: str | None = Field(default=None, description="Default: 'subject predicate object'.")
    valid_at: TimeArg = Field(default=None, description="When it became true.")
    invalid_at: TimeArg = Field(default=None, description="When it stopped being true.")
    observed_at: TimeArg = Field(default=None, description="When it was observed.")
    natural_key: str | None = Field(default=None, description="Idempotency key (optional).")
    source: Source | None = None
    quote: str | None = Field(
        default=None,
        description="The words the fact was taken from, a part of its source (or span).",
    )
    share_quote: bool = Field(
        default=False,
        description="Let the quoted words go with the fact when placement moves it to a "
        "shared scope (default: only a reference to the span goes).",
    )

    def draft(self) -> FactDraft:
        s = self.source
        return FactDraft(
            subject=EntityRef(self.subject.type, self.subject.name),
            predicate=self.predicate,
            object=EntityRef(self.object.type, self.object.name) if self.object else None,
            object_value=self.value,
            text=self.text,
            natural_key=self.natural_key,
            observed_at=parse_optional(self.observed_at, "observed_at"),
            valid_at=parse_optional(self.valid_at, "valid_at"),
            invalid_at=parse_optional(self.invalid_at, "invalid_at"),
            source=SourceRef(s.chunk_id, s.start, s.end) if s else None,
            quote=self.quote,
            share_quote=self.share_quote,
        )


class AssertResult(TypedDict):
    """Per fact: the fact, whether it was new, where placement filed it, what it closed."""

    results: list[dict[str, Any]]


class FactsResult(TypedDict):
    """Facts in (valid_at, created_at, id) order; has_more when the page was full."""

    facts: list[dict[str, Any]]
    has_more: bool


class HistoryResult(TypedDict):
    """The supersession chain oldest first (null: no such fact); `cursor` pages on."""

    facts: list[dict[str, Any]] | None
    cursor: str | None


class SupersedeResult(TypedDict):
    """The retired fact, its replacement, and whether this pair was already recorded."""

    retired: dict[str, Any]
    replacement: dict[str, Any]
    already: bool


class FactResult(TypedDict):
    """The fact as it now stands."""

    fact: dict[str, Any]


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the fact tools to ``server``."""

    @server.tool(
        description="State facts (subject, predicate, object or value, optional validity "
        "times), idempotently. With place=true the tenant ontology may file a fact under "
        "another scope; each result says where it went and why.",
        # A fact can close a contradicted one (its `closed` list), so not additive only.
        annotations=writes(destructive=True, idempotent=True),
    )
    async def assert_facts(
        ctx: Context,
        facts: Annotated[list[FactItem], Field(description="1-200 facts.")],
        scope: ScopeArg = Scope.USER,
        place: Annotated[bool, Field(description="Let the tenant ontology place facts.")] = True,
    ) -> AssertResult:
        svc, who = await caller(ctx)
        placed = await tenant.assert_placed(svc, who, scope, [f.draft() for f in facts], place)
        return {
            "results": [
                {
                    "fact": fact_json(p.asserted.fact),
                    "created": p.asserted.created,
                    "placement": plain(p.placement) if p.placement else None,
                    "closed": [
                        {
                            "fact": fact_json(c.fact),
                            "invalid_at": c.invalid_at.isoformat(),
                            "reason": c.reason.value,
                            "by_id": c.by_id,
                            "same_start": c.same_start,
                        }
                        for c in p.asserted.closed
                    ],
                    "merged": p.asserted.merged,
                }
                for p in placed
            ]
        }

    @server.tool(
        description="List facts, optionally about one subject or predicate, as they stood at "
        "a time (as_of, default now) and as they were known then (known_at).",
        annotations=READS,
    )
    async def facts(
        ctx: Context,
        scope: ScopeArg = Scope.USER,
        subject: Annotated[Entity | None, Field(description="Only facts about this.")] = None,
        predicate: str | None = None,
        as_of: TimeArg = None,
        known_at: TimeArg = None,
        include_retired: bool = False,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> FactsResult:
        svc, who = await caller(ctx)
        view = fact_ops.time_view(
            svc,
            parse_optional(as_of, "as_of"),
            parse_optional(known_at, "known_at"),
            include_retired,
        )
        ref = EntityRef(subject.type, subject.name) if subject else None
        found = await fact_ops.list_facts(svc, who, scope, view, ref, predicate, limit)
        return {"facts": [fact_json(f) for f in found.items], "has_more": found.has_more}

    @server.tool(
        description="A fact's supersession chain, oldest first: the facts it replaced and "
        "the ones that replaced it, each with its validity and when it was retired. Null "
        "facts when the scope holds no such fact. Page with the returned cursor.",
        annotations=READS,
    )
    async def fact_history(
        ctx: Context,
        id: FactId,
        scope: ScopeArg = Scope.USER,
        limit: Limit = paging.DEFAULT_LIMIT,
        after: After = None,
    ) -> HistoryResult:
        svc, who = await caller(ctx)
        found = await fact_ops.history(svc, who, scope, id, limit, after)
        if found is None:
            return {"facts": None, "cursor": None}
        return {"facts": [fact_json(f) for f in found.items], "cursor": found.cursor}

    @server.tool(
        description="Replace a fact by a newer one you asserted (by_id): the old fact stops "
        "being true when the new one starts, is retired now, and keeps answering about the "
        "past. Repeating the same pair is a no-op (already: true).",
        annotations=writes(destructive=True, idempotent=True),
    )
    async def supersede_fact(
        ctx: Context,
        id: FactId,
        by_id: Annotated[str, Field(description="The replacing fact's id, in the same scope.")],
        scope: ScopeArg = Scope.USER,
    ) -> SupersedeResult:
        svc, who = await caller(ctx)
        old, new, already = await fact_ops.supersede(svc, who, scope, id, by_id)
        return {"retired": fact_json(old), "replacement": fact_json(new), "already": already}

    @server.tool(
        description="Say a fact stopped being true (at invalid_at, default now) without a "
        "replacement; it keeps answering about the time it held.",
        # A second call is refused (CONFLICT) and changes nothing.
        annotations=writes(destructive=True, idempotent=True),
    )
    async def retract_fact(
        ctx: Context, id: FactId, scope: ScopeArg = Scope.USER, invalid_at: TimeArg = None
    ) -> FactResult:
        svc, who = await caller(ctx)
        end = parse_optional(invalid_at, "invalid_at")
        return {"fact": fact_json(await fact_ops.retract(svc, who, scope, id, end))}
