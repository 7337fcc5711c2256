"""GraphQL fields of the entity graph: facts, their time, history, judging and graph recall."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry
from strawberry import ID

from palimpsest import paging
from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import GraphSearch, costs
from palimpsest.graphql.scalars import Instant
from palimpsest.graphql.types import (
    QUOTE_HELP,
    AfterArg,
    ChunkType,
    LimitArg,
    Origin,
    Page,
    Provenance,
    Scope,
    page_of,
)
from palimpsest.resolvers import cycle
from palimpsest.resolvers import entities as graph
from palimpsest.resolvers import facts as ops
from palimpsest.schema import models, pairs
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef
from palimpsest.schema.pairs import FactConflict as FactPair


@strawberry.enum(description="A judge's verdict; it sets the fact's confidence.")
class Verdict(Enum):
    SUPPORTED = "supported"
    UNCLEAR = "unclear"
    MISTYPED = "mistyped"
    UNSUPPORTED = "unsupported"


@strawberry.enum(
    description="What a judge made of a pair of close facts; a report, it changes no fact."
)
class PairVerdict(Enum):
    SAME = "same"
    CONFLICT = "conflict"
    COMPATIBLE = "compatible"


@strawberry.type
class Entity:
    id: ID
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
            id=ID(e.id), type=e.type, name=e.name, aliases=list(e.aliases), provenance=provenance
        )


@strawberry.type(description="A span of a chunk that attests a fact.")
class FactSource:
    chunk_id: ID
    document_id: ID | None
    start: int
    end: int
    text: str | None = strawberry.field(description=QUOTE_HELP)
    origin_scope: Scope | None = strawberry.field(
        description="The scope of the quoted chunk (a placed fact may quote another scope)."
    )
    added_at: datetime
    origin: Origin | None = strawberry.field(
        description="What kind of writer asserted the fact from this span."
    )

    @classmethod
    def of(cls, x: models.FactSource) -> FactSource:
        return cls(
            chunk_id=ID(x.chunk_id),
            document_id=ID(x.document_id) if x.document_id else None,
            start=x.start,
            end=x.end,
            text=x.text,
            origin_scope=Scope(x.origin_scope) if x.origin_scope else None,
            added_at=x.added_at,
            origin=Origin(x.origin) if x.origin else None,
        )


@strawberry.type(
    description="A bi-temporal fact. validAt/invalidAt: world time (half-open); "
    "createdAt/expiredAt: when this server recorded and retired it."
)
class Fact:
    scope: Scope
    id: ID
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
    supersedes: ID | None
    superseded_by: ID | None
    confidence: float | None
    verdict: Verdict | None
    judge_reason: str | None
    provenance: Provenance
    sources: list[FactSource] = strawberry.field(
        description="Every span attesting this fact, earliest first; `provenance.sourceQuote` "
        "is the first. A fact with sources goes when its last source is deleted or erased."
    )

    @classmethod
    def of(cls, f: models.Fact) -> Fact:
        return cls(
            scope=f.scope,
            id=ID(f.id),
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
            supersedes=ID(f.supersedes) if f.supersedes else None,
            superseded_by=ID(f.superseded_by) if f.superseded_by else None,
            confidence=f.confidence,
            verdict=Verdict(f.verdict) if f.verdict else None,
            judge_reason=f.judge_reason,
            provenance=Provenance.of(f.provenance),
            sources=[FactSource.of(x) for x in f.sources],
        )


@strawberry.type(
    description="Two facts of one subject and predicate, close in meaning but not merged, and "
    "what the operator's model judged of them (null until judged). A verdict never closes or "
    "deletes a fact."
)
class FactConflict:
    id: ID
    older: Fact
    newer: Fact
    cosine: float = strawberry.field(description="The cosine of the two facts' text vectors.")
    created_at: datetime = strawberry.field(description="When the newer fact's write recorded it.")
    verdict: PairVerdict | None
    reason: str | None = strawberry.field(description="The judge's short reason.")
    judged_by: str | None = strawberry.field(
        description="Who judged: `model:<prompt version>:<model name>`."
    )
    judged_at: datetime | None

    @classmethod
    def of(cls, c: FactPair) -> FactConflict:
        return cls(
            id=ID(c.id),
            older=Fact.of(c.older),
            newer=Fact.of(c.newer),
            cosine=c.cosine,
            created_at=c.created_at,
            verdict=PairVerdict(c.verdict.value) if c.verdict else None,
            reason=c.reason,
            judged_by=c.judged_by,
            judged_at=c.judged_at,
        )


@strawberry.input
class EntityInput:
    type: str
    name: str


@strawberry.input(
    description="The span of a chunk (character offsets into its text) a fact was taken from."
)
class SourceInput:
    chunk_id: ID
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
    observed_at: Instant | None = None
    valid_at: Instant | None = strawberry.field(
        default=None, description="When the fact starts being true (inclusive)."
    )
    invalid_at: Instant | None = strawberry.field(
        default=None, description="When the fact stops being true (exclusive)."
    )
    source: SourceInput | None = None
    quote: str | None = strawberry.field(
        default=None,
        description="The words the fact was taken from, a part of its source (of the span, "
        "for a harvested span's facts): the source is narrowed to their first place in it.",
    )
    share_quote: bool = strawberry.field(
        default=False,
        description="Let the quoted words go with the fact when placement moves it out of "
        "the source's scope. Default: there, the source names its span without its text, "
        "unless the quote says no more than the fact's own text and names.",
    )

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
            quote=self.quote,
            share_quote=self.share_quote,
        )


@strawberry.type
class SupersedeResult:
    retired: Fact
    replacement: Fact
    already: bool = strawberry.field(description="True when this pair was already recorded.")


@strawberry.type
class ChunkRef:
    id: ID
    document_id: ID
    type: ChunkType
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
    @strawberry.field(
        description="Facts by subject and predicate as of a time (default now), in "
        "(validAt, createdAt, id) order with undated facts last, paged (limit at most "
        f"{ops.MAX_LIST_LIMIT})."
    )
    async def facts(
        self,
        info: Info,
        scope: Scope,
        subject: EntityInput | None = None,
        predicate: str | None = None,
        as_of: Instant | None = None,
        known_at: Instant | None = None,
        include_retired: bool = False,
        include_refuted: bool = False,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[Fact]:
        c = info.context
        view = ops.time_view(c.services, as_of, known_at, include_retired, include_refuted)
        ref = EntityRef(subject.type, subject.name) if subject else None
        found = await ops.list_facts(
            c.services, c.principal, scope, view, ref, predicate, limit, after
        )
        return page_of(found, Fact.of)

    @strawberry.field(
        description="Pairs of facts of one subject and predicate that are close in meaning but "
        "did not merge, newest first, with what the operator's model judged of each (report "
        "only; docs/extraction.md). `verdicts` keeps pairs judged so, `pending` those not "
        f"judged yet (both: either); paged (limit at most {ops.MAX_CONFLICTS_LIMIT})."
    )
    async def fact_conflicts(
        self,
        info: Info,
        scope: Scope,
        verdicts: list[PairVerdict] | None = None,
        pending: bool = False,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[FactConflict]:
        c = info.context
        wanted = None if verdicts is None else [pairs.PairVerdict(v.value) for v in verdicts]
        found = await ops.list_conflicts(
            c.services, c.principal, scope, wanted, pending, limit, after
        )
        return page_of(found, FactConflict.of)

    @strawberry.field(
        description="One fact by id, whatever its time; null when the scope holds no such fact."
    )
    async def fact(self, info: Info, scope: Scope, id: ID) -> Fact | None:
        c = info.context
        found = await ops.find_fact(c.services, c.principal, scope, id)
        return Fact.of(found) if found else None

    @strawberry.field(
        description="The fact's supersession chain, oldest first, paged; null when the scope "
        "holds no such fact."
    )
    async def fact_history(
        self,
        info: Info,
        scope: Scope,
        id: ID,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[Fact] | None:
        c = info.context
        found = await ops.history(c.services, c.principal, scope, id, limit, after)
        return page_of(found, Fact.of) if found else None

    @strawberry.field(
        description="Entities by type, exact name, or a name fragment, in (normalised name, "
        f"type) order, paged (limit at most {graph.MAX_LIST_LIMIT})."
    )
    async def entities(
        self,
        info: Info,
        scope: Scope,
        type: str | None = None,
        name: str | None = None,
        contains: str | None = None,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[Entity]:
        c = info.context
        found = await graph.find_entities(
            c.services, c.principal, scope, type, name, contains, limit, after
        )
        return page_of(found, Entity.of)

    @strawberry.field(
        description="Walk the graph from a query's best facts or from seed "
        "entities, over `hops` hops, with the time view applied to what is found.",
        metadata=costs(GraphSearch()),
    )
    async def graph_recall(
        self,
        info: Info,
        scope: Scope,
        query: str | None = None,
        seed_ids: list[ID] | None = None,
        hops: int = 1,
        as_of: Instant | None = None,
        known_at: Instant | None = None,
        include_retired: bool = False,
        include_refuted: bool = False,
        limit: int = 50,
    ) -> GraphRecallResult:
        c = info.context
        view = ops.time_view(c.services, as_of, known_at, include_retired, include_refuted)
        found = await graph.recall(
            c.services, c.principal, scope, view, query, list(seed_ids or []), hops, limit
        )
        return GraphRecallResult(
            seeds=[Entity.of(e) for e in found.seeds],
            entities=[Entity.of(e) for e in found.entities],
            facts=[Fact.of(f) for f in found.facts],
            chunks=[
                ChunkRef(
                    id=ID(x.id),
                    document_id=ID(x.document_id),
                    type=ChunkType(x.type),
                    text=x.text,
                    provenance=Provenance.of(x.provenance) if x.provenance else None,
                )
                for x in found.chunks
            ],
        )


@strawberry.type(description="What judgeConflicts did: verdicts are reports, they change no fact.")
class JudgeConflictsResult:
    asked: int = strawberry.field(description="Pending pairs shown to the model.")
    judged: int = strawberry.field(description="Verdicts recorded.")
    dropped: int = strawberry.field(
        description="Items of the answer dropped (an unasked pair, an unknown verdict, a "
        "second verdict for one pair, a malformed item)."
    )
    failed: int = strawberry.field(
        description="Pairs whose call failed after its retries; they stay pending."
    )
    refused: int = strawberry.field(
        description="Pairs not asked: the tenant's extraction tokens for the day are spent."
    )
    pending: int = strawberry.field(
        description="The scope's pairs still waiting for a verdict afterwards."
    )

    @classmethod
    def of(cls, r: pairs.JudgeRun) -> JudgeConflictsResult:
        return cls(
            asked=r.asked,
            judged=r.judged,
            dropped=r.dropped,
            failed=r.failed,
            refused=r.refused,
            pending=r.pending,
        )


@strawberry.type
class FactMutation:
    @strawberry.mutation(
        description="Supersede a fact: it stops being true when `byId` starts, "
        "is retired now, and keeps answering about the past."
    )
    async def supersede_fact(self, info: Info, scope: Scope, id: ID, by_id: ID) -> SupersedeResult:
        c = info.context
        old, new, already = await ops.supersede(c.services, c.principal, scope, id, by_id)
        return SupersedeResult(retired=Fact.of(old), replacement=Fact.of(new), already=already)

    @strawberry.mutation(description="Say a fact stopped being true, without a replacement.")
    async def retract_fact(
        self, info: Info, scope: Scope, id: ID, invalid_at: Instant | None = None
    ) -> Fact:
        c = info.context
        return Fact.of(await ops.retract(c.services, c.principal, scope, id, invalid_at))

    @strawberry.mutation(
        description="Replace an entity's aliases: other names (word-bounded, any case) by "
        "which the consolidator links conversation turns to it."
    )
    async def set_entity_aliases(
        self, info: Info, scope: Scope, id: ID, aliases: list[str]
    ) -> Entity:
        c = info.context
        return Entity.of(await graph.set_aliases(c.services, c.principal, scope, id, aliases))

    @strawberry.mutation(description="Judge a fact; `UNSUPPORTED` hides it from reads by default.")
    async def judge_fact(
        self, info: Info, scope: Scope, id: ID, verdict: Verdict, reason: str
    ) -> Fact:
        c = info.context
        fact = await ops.judge(c.services, c.principal, scope, id, verdict.value, reason)
        return Fact.of(fact)

    @strawberry.mutation(
        description="Ask the operator's model now about the scope's oldest pairs of close "
        "facts still without a verdict (`limit` of them, at most "
        f"{cycle.MAX_JUDGE_LIMIT}; default PALIMPSEST_JUDGE_PAIRS_PER_CALL), one call per "
        "PALIMPSEST_JUDGE_PAIRS_PER_CALL pairs, as the consolidator does after a visit; "
        "report-only (docs/extraction.md). UNAVAILABLE when no model is configured."
    )
    async def judge_conflicts(
        self, info: Info, scope: Scope, limit: int | None = None
    ) -> JudgeConflictsResult:
        c = info.context
        run = await cycle.judge_now(c.services, c.principal, scope, limit)
        return JudgeConflictsResult.of(run)
