"""GraphQL's fact writes: ``assertFacts`` (placed by the tenant ontology, or not), what it
answers of each fact (``FactAssertion``) and the facts a write closed (``FactClosure``).

Beside the other fact fields (``facts.py``: reads, supersede, retract, judge); apart from them
because an answer names its placement (``placement.py``'s ``PlacementResult``).
"""

from __future__ import annotations

from datetime import datetime

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import EMBEDS, costs
from palimpsest.graphql.facts import Fact, FactInput
from palimpsest.graphql.placement import PlacementResult
from palimpsest.graphql.types import Scope
from palimpsest.ontology.reconcile import ClosureReason
from palimpsest.resolvers import tenant as ops
from palimpsest.resolvers.facts import Closed

strawberry.enum(
    ClosureReason,
    name="ClosureReason",
    description="Why a write closed a fact. SINGLE_VALUED: the ontology declares the "
    "predicate single-valued for the subject's type, and a fact with another object starts "
    "where this one now ends.",
)


@strawberry.type(
    description="A fact the write closed: it now ends at invalidAt, where the fact byId starts "
    "(a supersession: `supersededBy` and `expiredAt` are set, and reads as of earlier times "
    "and at earlier knownAt still see it)."
)
class FactClosure:
    fact: Fact
    invalid_at: datetime
    reason: ClosureReason
    by_id: strawberry.ID
    same_start: bool = strawberry.field(
        description="Both facts start at the same instant: the newer observation (byId) was "
        "kept and this one closed where it starts (an empty interval)."
    )

    @classmethod
    def of(cls, c: Closed) -> FactClosure:
        return cls(
            fact=Fact.of(c.fact),
            invalid_at=c.invalid_at,
            reason=c.reason,
            by_id=strawberry.ID(c.by_id),
            same_start=c.same_start,
        )


@strawberry.type
class FactAssertion:
    fact: Fact
    created: bool = strawberry.field(description="False when the natural key already existed.")
    placement: PlacementResult | None
    closed: list[FactClosure] = strawberry.field(
        description="The closures this write made that this fact took part in, as the fact "
        "closed or the one closing it (single-valued predicates; empty otherwise)."
    )
    merged: strawberry.ID | None = strawberry.field(
        default=None,
        description="A near-duplicate of a stored fact (or of an earlier fact of the batch) "
        "is not stored twice: it became a further source of the kept fact, whose id this is "
        "(and `fact` is that fact). Null otherwise.",
    )


@strawberry.type
class FactWriteMutation:
    @strawberry.mutation(
        description="Assert up to 200 facts, idempotently by natural key. With `place` (the "
        "default) each fact goes where the tenant ontology says, failing closed; all facts, "
        "entities and mention edges are written in one transaction, or none.",
        metadata=costs(EMBEDS),
    )
    async def assert_facts(
        self, info: Info, scope: Scope, facts: list[FactInput], place: bool = True
    ) -> list[FactAssertion]:
        c = info.context
        placed = await ops.assert_placed(
            c.services, c.principal, scope, [f.draft() for f in facts], place
        )
        return [
            FactAssertion(
                fact=Fact.of(p.asserted.fact),
                created=p.asserted.created,
                placement=PlacementResult.of(p.placement) if p.placement else None,
                closed=[FactClosure.of(c) for c in p.asserted.closed],
                merged=strawberry.ID(p.asserted.merged) if p.asserted.merged else None,
            )
            for p in placed
        ]
