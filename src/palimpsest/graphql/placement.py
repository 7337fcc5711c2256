"""GraphQL fields for the tenant ontology, placement (dry run) and placed fact writes."""

from __future__ import annotations

from datetime import datetime

import strawberry

from palimpsest import placement as pure
from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import EMBEDS, costs
from palimpsest.graphql.facts import Fact, FactInput
from palimpsest.graphql.types import Scope
from palimpsest.ontology import OntologyStatus
from palimpsest.resolvers import ontology as ops

strawberry.enum(pure.PlacementReason, name="PlacementReason", description="Why a fact went where.")
strawberry.enum(OntologyStatus, name="OntologyStatus", description="Only CONFIRMED moves facts.")


@strawberry.type(description="The tenant's ontology as stored (Markdown).")
class OntologyInfo:
    markdown: str
    status: OntologyStatus
    updated_at: datetime
    updated_by: str | None

    @classmethod
    def of(cls, o: ops.StoredOntology) -> OntologyInfo:
        return cls(
            markdown=o.markdown,
            status=OntologyStatus(o.status),
            updated_at=o.updated_at,
            updated_by=o.updated_by,
        )


@strawberry.type(
    description="Where one fact goes and why; it stays in the requested scope "
    "whenever anything is uncertain. A caller without TENANT on the memory plane (where the "
    "ontology lives) gets only `ISOLATED` or `NO_TENANT_ACCESS`, with no ontology detail."
)
class PlacementResult:
    scope: Scope
    moved: bool
    reason: pure.PlacementReason
    message: str
    advisory: str | None
    entity_type: str | None

    @classmethod
    def of(cls, p: pure.Placement) -> PlacementResult:
        return cls(
            scope=p.scope,
            moved=p.moved,
            reason=p.reason,
            message=p.message,
            advisory=p.advisory,
            entity_type=p.entity_type,
        )


@strawberry.input
class PlacementItemInput:
    entity_type: str | None = None
    subject: str | None = None


@strawberry.type
class FactAssertion:
    fact: Fact
    created: bool = strawberry.field(description="False when the natural key already existed.")
    placement: PlacementResult | None


@strawberry.type
class PlacementQuery:
    @strawberry.field(description="The tenant's ontology, or null when none is stored.")
    async def ontology(self, info: Info) -> OntologyInfo | None:
        c = info.context
        stored = await ops.get_ontology(c.services, c.principal)
        return OntologyInfo.of(stored) if stored else None

    @strawberry.field(description="Dry run: where would these facts go? Writes nothing.")
    async def placement(
        self, info: Info, scope: Scope, items: list[PlacementItemInput]
    ) -> list[PlacementResult]:
        c = info.context
        decided = await ops.placement(
            c.services,
            c.principal,
            scope,
            [pure.PlacementItem(entity_type=i.entity_type, subject=i.subject) for i in items],
        )
        return [PlacementResult.of(p) for p in decided]


@strawberry.type
class PlacementMutation:
    @strawberry.mutation(description="Replace the tenant ontology (tenant admins only).")
    async def set_ontology(self, info: Info, markdown: str) -> OntologyInfo:
        c = info.context
        return OntologyInfo.of(await ops.set_ontology(c.services, c.principal, markdown))

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
            )
            for p in placed
        ]
