"""GraphQL fields of the harvest bridge: bank evicted spans, and see the queue they wait on."""

from __future__ import annotations

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.facts import TIME_HELP, FactInput
from palimpsest.resolvers import harvest as ops


@strawberry.input(description="One span of dialogue the runtime evicted from its context.")
class SpanInput:
    text: str
    speaker: str | None = None
    role: str | None = strawberry.field(default=None, description="e.g. user or assistant.")
    observed_at: str | None = strawberry.field(
        default=None, description="When it was said. " + TIME_HELP
    )
    source_id: str | None = strawberry.field(
        default=None,
        description="The runtime's idempotency key for the span, unique per run: sending "
        "the same (run, sourceId) again is a no-op counted as a duplicate.",
    )
    facts: list[FactInput] | None = strawberry.field(
        default=None,
        description="Candidate facts the runtime's model took from this span; the "
        "consolidator places them like assertFacts, quoting the span. No `source`.",
    )

    def draft(self) -> ops.SpanDraft:
        return ops.SpanDraft(
            text=self.text,
            speaker=self.speaker,
            role=self.role,
            observed_at=self.observed_at,
            source_id=self.source_id,
            facts=tuple(f.draft() for f in self.facts or ()),
        )


@strawberry.type(description="What harvest banked. Accepted spans are durable on return.")
class HarvestReceipt:
    accepted: int = strawberry.field(description="Spans newly banked by this call.")
    duplicates: int = strawberry.field(
        description="Spans already banked under the same (run, sourceId); nothing written."
    )
    span_ids: list[str] = strawberry.field(description="One id per span, in request order.")
    compaction_generation: int


@strawberry.type
class HarvestMutation:
    @strawberry.mutation(
        description="Bank the spans a distillation evicted, for the consolidator to turn into "
        "memory in the run user's USER scope. Needs USER granted and a user in the token; "
        "at most 1000 spans and 1 MiB per call, all in one transaction."
    )
    async def harvest(
        self, info: Info, spans: list[SpanInput], compaction_generation: int
    ) -> HarvestReceipt:
        c = info.context
        receipt = await ops.harvest(
            c.services, c.principal, [s.draft() for s in spans], compaction_generation
        )
        return HarvestReceipt(
            accepted=receipt.accepted,
            duplicates=receipt.duplicates,
            span_ids=receipt.span_ids,
            compaction_generation=receipt.compaction_generation,
        )
