"""GraphQL fields for the tenant ontology and placement (dry run); the placed fact writes
(``assertFacts``) are beside the other fact fields, in ``fact_writes.py``."""

from __future__ import annotations

from datetime import datetime

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.types import Scope
from palimpsest.ontology import OntologyStatus
from palimpsest.ontology import placement as pure
from palimpsest.resolvers import tenant as ops

strawberry.enum(pure.PlacementReason, name="PlacementReason", description="Why a fact went where.")
strawberry.enum(OntologyStatus, name="OntologyStatus", description="Only CONFIRMED moves facts.")


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
