"""GraphQL fields of the entity graph: facts, their time, history, judging and graph recall."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.types import Provenance, Scope
from palimpsest.resolvers import facts as ops
from palimpsest.resolvers import graph
from palimpsest.resolvers.fact_input import EntityRef, FactDraft, SourceRef
from palimpsest.schema import models

TIME_HELP = (
    "YYYY, YYYY-MM, YYYY-MM-DD or RFC 3339 with offset; a partial date is its first instant."
)


@strawberry.enum(description="A judge's verdict; it sets the fact's confidence.")
class Verdict(Enum):
    SUPPORTED = "supported"
    UNCLEAR = "unclear"
    MISTYPED = "mistyped"
    UNSUPPORTED = "unsupported"


@strawberry.type
class Entity:
    id: str
    type: str
    name: str
    aliases: list[str] = strawberry.field(
        description="Other names the consolidator's mentions extractor finds it by."
    )
    provenance: Provenance | None = strawberry.field(
        description="Who first recorded the entity (null for entities older than provenance)."
    )

    @classmethod
    def of(cls, e: models.Entity) -> Entity:
        provenance = Provenance.of(e.provenance) if e.provenance else None
        return cls(
            id=e.id, type=e.type, name=e.name, aliases=list(e.aliases), provenance=provenance
        )


@strawberry.type(
    description="A bi-temporal fact. validAt/invalidAt: world time (half-open); "
    "createdAt/expiredAt: when this server recorded and retired it."
)
class Fact:
    scope: Scope
    id: str
    subject: Entity
    predicate: str
    object: Entity
    text: str
    natural_key: str
    observed_at: datetime | None
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    supersedes: str | None
    superseded_by: str | None
    confidence: float | None
    verdict: str | None
    judge_reason: str | None
    provenance: Provenance

    @classmethod
    def of(cls, f: models.Fact) -> Fact:
        return cls(
            scope=f.scope,
            id=f.id,
            subject=Entity.of(f.subject),
            predicate=f.predicate,
            object=Entity.of(f.object),
            text=f.text,
            natural_key=f.natural_key,
            observed_at=f.observed_at,
            valid_at=f.valid_at,
            invalid_at=f.invalid_at,
            created_at=f.created_at,
            expired_at=f.expired_at,
            supersedes=f.supersedes,
            superseded_by=f.superseded_by,
            confidence=f.confidence,
            verdict=f.verdict,
            judge_reason=f.judge_reason,
            provenance=Provenance.of(f.provenance),
        )


@strawberry.input
class EntityInput:
    type: str
    name: str


@strawberry.input(
    description="The span of a chunk (character offsets into its text) a fact was taken from."
)
class SourceInput:
    chunk_id: str
    start: int
    end: int


@strawberry.input
class FactInput:
    subject: EntityInput
    predicate: str
    object: EntityInput | None = None
    object_value: str | None = strawberry.field(
        default=None, description="A literal object instead of an entity."
    )
    text: str | None = strawberry.field(
        default=None, description="Default: subject predicate object."
    )
    natural_key: str | None = strawberry.field(
        default=None,
        description="Idempotency key; default derived from subject, predicate, object and validAt.",
    )
    observed_at: str | None = strawberry.field(default=None, description=TIME_HELP)
    valid_at: str | None = strawberry.field(default=None, description=TIME_HELP)
    invalid_at: str | None = strawberry.field(default=None, description=TIME_HELP)
    source: SourceInput | None = None

    def draft(self) -> FactDraft:
        source = self.source
        return FactDraft(
            subject=EntityRef(self.subject.type, self.subject.name),
            predicate=self.predicate,
            object=EntityRef(self.object.type, self.object.name) if self.object else None,
            object_value=self.object_value,
            text=self.text,
            natural_key=self.natural_key,
            observed_at=self.observed_at,
            valid_at=self.valid_at,
            invalid_at=self.invalid_at,
            source=SourceRef(source.chunk_id, source.start, source.end) if source else None,
        )


@strawberry.type
class SupersedeResult:
    retired: Fact
    replacement: Fact
    already: bool = strawberry.field(description="True when this pair was already recorded.")


@strawberry.type
class ChunkRef:
    id: str
    document_id: str
    type: str
    text: str
    provenance: Provenance | None


@strawberry.type
class GraphRecallResult:
    seeds: list[Entity]
    entities: list[Entity]
    facts: list[Fact]
    chunks: list[ChunkRef]


@strawberry.type
class FactQuery:
    @strawberry.field(description="Facts, by subject and predicate, as of a time (default now).")
    async def facts(
        self,
        info: Info,
        scope: Scope,
        subject: EntityInput | None = None,
        predicate: str | None = None,
        as_of: str | None = None,
        known_at: str | None = None,
        include_retired: bool = False,
        include_refuted: bool = False,
        limit: int = 100,
    ) -> list[Fact]:
        c = info.context
        view = ops.time_view(c.services, as_of, known_at, include_retired, include_refuted)
        ref = EntityRef(subject.type, subject.name) if subject else None
        found = await ops.list_facts(c.services, c.principal, scope, view, ref, predicate, limit)
        return [Fact.of(f) for f in found]

    @strawberry.field(description="One fact by id, whatever its time.")
    async def fact(self, info: Info, scope: Scope, id: str) -> Fact:
        c = info.context
        return Fact.of(await ops.get_fact(c.services, c.principal, scope, id))

    @strawberry.field(description="The fact's supersession chain, oldest first.")
    async def fact_history(self, info: Info, scope: Scope, id: str) -> list[Fact]:
        c = info.context
        return [Fact.of(f) for f in await ops.history(c.services, c.principal, scope, id)]

    @strawberry.field(description="Entities by type, exact name, or a name fragment.")
    async def entities(
        self,
        info: Info,
        scope: Scope,
        type: str | None = None,
        name: str | None = None,
        contains: str | None = None,
        limit: int = 100,
    ) -> list[Entity]:
        c = info.context
        found = await graph.find_entities(
            c.services, c.principal, scope, type, name, contains, limit
        )
        return [Entity.of(e) for e in found]

    @strawberry.field(
        description="Walk the graph from a query's best facts or from seed "
        "entities, over `hops` hops, with the time view applied to what is found."
    )
    async def graph_recall(
        self,
        info: Info,
        scope: Scope,
        query: str | None = None,
        seed_ids: list[str] | None = None,
        hops: int = 1,
        as_of: str | None = None,
        known_at: str | None = None,
        include_retired: bool = False,
        include_refuted: bool = False,
        limit: int = 50,
    ) -> GraphRecallResult:
        c = info.context
        view = ops.time_view(c.services, as_of, known_at, include_retired, include_refuted)
        found = await graph.recall(
            c.services, c.principal, scope, view, query, seed_ids or [], hops, limit
        )
        return GraphRecallResult(
            seeds=[Entity.of(e) for e in found.seeds],
            entities=[Entity.of(e) for e in found.entities],
            facts=[Fact.of(f) for f in found.facts],
            chunks=[
                ChunkRef(
                    id=x.id,
                    document_id=x.document_id,
                    type=x.type,
                    text=x.text,
                    provenance=Provenance.of(x.provenance) if x.provenance else None,
                )
                for x in found.chunks
            ],
        )


@strawberry.type
class FactMutation:
    @strawberry.mutation(
        description="Supersede a fact: it stops being true when `byId` starts, "
        "is retired now, and keeps answering about the past."
    )
    async def supersede_fact(
        self, info: Info, scope: Scope, id: str, by_id: str
    ) -> SupersedeResult:
        c = info.context
        old, new, already = await ops.supersede(c.services, c.principal, scope, id, by_id)
        return SupersedeResult(retired=Fact.of(old), replacement=Fact.of(new), already=already)

    @strawberry.mutation(description="Say a fact stopped being true, without a replacement.")
    async def retract_fact(
        self, info: Info, scope: Scope, id: str, invalid_at: str | None = None
    ) -> Fact:
        c = info.context
        return Fact.of(await ops.retract(c.services, c.principal, scope, id, invalid_at))

    @strawberry.mutation(
        description="Replace an entity's aliases: other names (word-bounded, any case) by "
        "which the consolidator links conversation turns to it."
    )
    async def set_entity_aliases(
        self, info: Info, scope: Scope, id: str, aliases: list[str]
    ) -> Entity:
        c = info.context
        return Entity.of(await graph.set_aliases(c.services, c.principal, scope, id, aliases))

    @strawberry.mutation(description="Judge a fact; `UNSUPPORTED` hides it from reads by default.")
    async def judge_fact(
        self, info: Info, scope: Scope, id: str, verdict: Verdict, reason: str
    ) -> Fact:
        c = info.context
        fact = await ops.judge(c.services, c.principal, scope, id, verdict.value, reason)
        return Fact.of(fact)
