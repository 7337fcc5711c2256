"""GraphQL fields of the harvest bridge: bank evicted spans, and see the queue they wait on."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry import ID

from palimpsest import paging
from palimpsest.graphql.context import Info
from palimpsest.graphql.facts import FactInput
from palimpsest.graphql.scalars import Instant
from palimpsest.graphql.types import AfterArg, LimitArg, Page, Scope, page_of
from palimpsest.resolvers import cycle as ops
from palimpsest.resolvers import cycle as pending


@strawberry.input(description="One span of dialogue the runtime evicted from its context.")
class SpanInput:
    text: str
    speaker: str | None = None
    role: str | None = strawberry.field(default=None, description="e.g. user or assistant.")
    observed_at: Instant | None = strawberry.field(default=None, description="When it was said.")
    source_id: ID | None = strawberry.field(
        default=None,
        description="The runtime's idempotency key for the span, unique per run: sending "
        "the same (run, sourceId) again is a no-op counted as a duplicate. A token without "
        "a run claim keys it by its session; one with neither cannot send a sourceId.",
    )
    facts: list[FactInput] | None = strawberry.field(
        default=None,
        description="Candidate facts the runtime's model took from this span; the "
        "consolidator places them like assertFacts, quoting the span, or the fact's `quote` "
        "(a part of the span's text). No `source`.",
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
    span_ids: list[ID] = strawberry.field(description="One id per span, in request order.")
    compaction_generation: int


@strawberry.type(description="A span the consolidator gave up on, with the error that stopped it.")
class DeadLetter:
    span_id: ID
    source_id: ID | None
    session: str | None
    attempts: int
    error: str | None
    dead_at: datetime | None


@strawberry.type(description="Spans on the consolidator's queue, by state.")
class PendingWork:
    scope: Scope
    queued: int = strawberry.field(description="Waiting for a worker.")
    leased: int = strawberry.field(description="Being consolidated under a live lease.")
    done: int
    dead: int = strawberry.field(description="Dead letters: failed too often.")
    oldest_queued_seconds: float | None = strawberry.field(
        description="Age of the oldest span not yet consolidated; null when none waits."
    )
    consolidators: int = strawberry.field(
        description="Consolidator workers running in the server that answered "
        "(PALIMPSEST_SERVE_CONSOLIDATORS); 0 when none runs here, and the queue is drained by "
        "`palimpsest consolidate` or another replica, if anything."
    )

    @classmethod
    def of(cls, w: pending.PendingWork) -> PendingWork:
        return cls(
            scope=w.scope,
            queued=w.queued,
            leased=w.leased,
            done=w.done,
            dead=w.dead,
            oldest_queued_seconds=w.oldest_queued_seconds,
            consolidators=w.consolidators,
        )


def _letter(d: pending.DeadLetter) -> DeadLetter:
    return DeadLetter(
        span_id=ID(d.span_id),
        source_id=ID(d.source_id) if d.source_id is not None else None,
        session=d.session_id,
        attempts=d.attempts,
        error=d.error,
        dead_at=d.dead_at,
    )


@strawberry.type
class HarvestQuery:
    @strawberry.field(
        description="Your harvested spans by state (scope USER), or, for tenant admins, the "
        "tenant's counts (scope TENANT)."
    )
    async def pending_work(self, info: Info, scope: Scope = Scope.USER) -> PendingWork:
        c = info.context
        return PendingWork.of(await pending.pending_work(c.services, c.principal, scope))

    @strawberry.field(
        description="Your dead letters: spans the consolidator gave up on, newest first, with "
        "the error that stopped each (limit at most 1000)."
    )
    async def dead_letters(
        self, info: Info, limit: LimitArg = paging.DEFAULT_LIMIT, after: AfterArg = None
    ) -> Page[DeadLetter]:
        c = info.context
        found = await pending.dead_letters(c.services, c.principal, limit, after)
        return page_of(found, _letter)


@strawberry.type
class HarvestMutation:
    @strawberry.mutation(
        description="Queue your dead letters again, with fresh attempts; returns the ids "
        "requeued (ids that are not your dead letters are left out)."
    )
    async def requeue_dead_letters(self, info: Info, span_ids: list[ID]) -> list[ID]:
        c = info.context
        return [ID(i) for i in await pending.requeue(c.services, c.principal, span_ids)]

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
            span_ids=[ID(i) for i in receipt.span_ids],
            compaction_generation=receipt.compaction_generation,
        )
