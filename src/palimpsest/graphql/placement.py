"""GraphQL fields for the tenant ontology, placement (dry run) and placed fact writes."""

from __future__ import annotations

from datetime import datetime

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import EMBEDS, costs
from palimpsest.graphql.facts import Fact, FactInput
from palimpsest.graphql.types import Scope
from palimpsest.ontology import OntologyStatus
from palimpsest.ontology import placement as pure
from palimpsest.ontology.reconcile import ClosureReason
from palimpsest.resolvers import tenant as ops
from palimpsest.resolvers.facts import Closed

strawberry.enum(pure.PlacementReason, name="PlacementReason", description="Why a fact went where.")
strawberry.enum(OntologyStatus, name="OntologyStatus", description="Only CONFIRMED moves facts.")
strawberry.enum(
    ClosureReason,
    name="ClosureReason",
    description="Why a write closed a fact. SINGLE_VALUED: the ontology declares the "
    "predicate single-valued for the subject's type, and a fact with another object starts "
    "where this one now ends.",
)


@strawberry.type(
    description="A predicate subjects of a type hold one value of at a time (`single:`, "
    "own or inherited): a newer fact with another object closes the one it replaces."
)
class SingleValuedPredicate:
    entity_type: str
    predicate: str
    spellings: list[str] = strawberry.field(
        description="Every spelling that names the predicate (`same:`), the canonical first."
    )
    type_spellings: list[str] = strawberry.field(
        description="The type's name, then its aliases: a fact whose subject is typed with "
        "any of them is held to the predicate's single value."
    )


@strawberry.type(
    description="The tenant's ontology as stored (Markdown). A caller without TENANT that "
    "writes facts in its own scope reads only what shapes those writes: `singleValued` while "
    "the ontology is confirmed, no `markdown`, `updatedBy` or `updatedAt`; an ontology that "
    "closes nothing reads as none."
)
class OntologyInfo:
    markdown: str | None
    status: OntologyStatus
    updated_at: datetime | None
    updated_by: str | None
    single_valued: list[SingleValuedPredicate] = strawberry.field(
        description="The declared single-valued predicates, per type (inherited ones included)."
    )

    @classmethod
    def of(cls, o: ops.StoredOntology) -> OntologyInfo:
        return cls(
            markdown=o.markdown,
            status=OntologyStatus(o.status),
            updated_at=o.updated_at,
            updated_by=o.updated_by,
            single_valued=[
                SingleValuedPredicate(
                    entity_type=s.entity_type,
                    predicate=s.predicate,
                    spellings=list(s.spellings),
                    type_spellings=list(s.type_spellings),
                )
                for s in o.single_valued
            ],
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
    single_valued: list[str] = strawberry.field(
        description="The predicates the item's type declares single-valued (dry run only)."
    )

    @classmethod
    def of(cls, p: pure.Placement) -> PlacementResult:
        return cls(
            scope=p.scope,
            moved=p.moved,
            reason=p.reason,
            message=p.message,
            advisory=p.advisory,
            entity_type=p.entity_type,
            single_valued=list(p.single_valued),
        )


@strawberry.input
class PlacementItemInput:
    entity_type: str | None = None
    subject: str | None = None


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
                closed=[FactClosure.of(c) for c in p.asserted.closed],
                merged=strawberry.ID(p.asserted.merged) if p.asserted.merged else None,
            )
            for p in placed
        ]
