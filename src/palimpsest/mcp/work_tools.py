"""MCP tools over the consolidator's queue: bank evicted spans (``harvest``) and see what is
still waiting (``pending_work``). Thin over ``resolvers/cycle/harvesting.py`` and
``resolvers/cycle/pending.py``, the resolvers behind GraphQL's ``harvest`` and ``pendingWork``."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.identity import Scope
from palimpsest.mcp.fact_tools import FactItem
from palimpsest.mcp.hints import READS, writes
from palimpsest.mcp.render import plain
from palimpsest.mcp.strict_args import Int32, ToolInput
from palimpsest.mcp.tools import Caller, ScopeArg, TimeArg
from palimpsest.resolvers import cycle as harvest_ops
from palimpsest.resolvers import cycle as pending


class Span(ToolInput):
    text: str = Field(description="The evicted text, as it stood in the context.")
    speaker: str | None = Field(default=None, description="Who said it, e.g. a name.")
    role: str | None = Field(default=None, description="user, assistant, tool...")
    observed_at: TimeArg = Field(default=None, description="When it was said.")
    source_id: str | None = Field(
        default=None, description="Your idempotency key for the span, unique in this run."
    )
    facts: list[FactItem] | None = Field(
        default=None, description="Facts your model drew from this span (optional)."
    )

    def draft(self) -> harvest_ops.SpanDraft:
        return harvest_ops.SpanDraft(
            text=self.text,
            speaker=self.speaker,
            role=self.role,
            observed_at=parse_optional(self.observed_at, "observed_at"),
            source_id=self.source_id,
            facts=tuple(f.draft() for f in self.facts or ()),
        )


class HarvestResult(TypedDict):
    """How many spans were accepted, how many were already banked, and their ids."""

    receipt: dict[str, Any]


class PendingResult(TypedDict):
    """Spans by state: queued, leased, done, dead; the oldest waiting span's age; the
    consolidator workers running in this server."""

    work: dict[str, Any]


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the queue tools to ``server``."""

    @server.tool(
        description="Bank the spans your context distillation evicted, so nothing is lost: "
        "they are stored at once in your user's memory and consolidated into recallable "
        "memory by a worker. Re-sending a span with the same source_id is a no-op.",
        # Idempotent only for spans that carry a source_id.
        annotations=writes(destructive=False, idempotent=False),
    )
    async def harvest(
        ctx: Context,
        spans: Annotated[list[Span], Field(description="1-1000 spans, at most 1 MiB in all.")],
        compaction_generation: Annotated[
            Int32, Field(ge=0, description="Which distillation of this run evicted them.")
        ],
    ) -> HarvestResult:
        svc, who = await caller(ctx)
        drafts = [s.draft() for s in spans]
        receipt = await harvest_ops.harvest(svc, who, drafts, compaction_generation)
        return {"receipt": plain(receipt)}

    @server.tool(
        description="How much of what you harvested is still waiting to be consolidated "
        "(scope USER), or, for tenant admins, the whole tenant's queue (scope TENANT): "
        "counts by state and the age in seconds of the oldest span not yet done.",
        annotations=READS,
    )
    async def pending_work(ctx: Context, scope: ScopeArg = Scope.USER) -> PendingResult:
        svc, who = await caller(ctx)
        return {"work": plain(await pending.pending_work(svc, who, scope))}
