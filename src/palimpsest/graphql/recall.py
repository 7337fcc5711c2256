"""GraphQL fields for hybrid recall and search."""

from __future__ import annotations

from datetime import date, datetime
from enum import Enum

import strawberry
from strawberry import ID

from palimpsest.domain.ranking import fusion as pure
from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import Searches, costs
from palimpsest.graphql.facts import Fact
from palimpsest.graphql.recall_args import (
    DedupArg,
    HalfLifeArg,
    MinScoreArg,
    PerDocumentArg,
    WeightsArg,
    WhenInput,
)
from palimpsest.graphql.types import ChunkType, Provenance, Scope
from palimpsest.resolvers import recall as ops

strawberry.enum(pure.Source, name="Source", description="Kinds of rows recall may return.")


@strawberry.enum(description="Which time filter a recall applied.")
class TimeFilterMode(Enum):
    PREFER = "prefer"  # a `when` window that ranks in-window rows first
    REQUIRE = "require"  # a `when` window that drops undated and out-of-window rows
    AS_OF = "as_of"  # an asOf/knownAt read of facts


@strawberry.enum(description="A temporal filter recall can apply to a kind of row.")
class TemporalFilter(Enum):
    WINDOW = "window"  # from/to on observedAt
    AS_OF = "as_of"  # validity at asOf (now by default)
    KNOWN_AT = "known_at"  # transaction time: rows as they were recorded at knownAt


@strawberry.type(description="The temporal filters recall applied to one kind of row.")
class KindFilter:
    kind: pure.Source
    filters: list[TemporalFilter]


@strawberry.type
class TimeFilter:
    mode: TimeFilterMode
    slack_seconds: int
    in_window: int
    out_of_window: int
    undated: int


@strawberry.type(
    description="The passage of a long chunk whose vector gave the vector leg its value: a "
    "window of the chunk's text past the start the embedding model reads."
)
class ScorePassage:
    index: int = strawberry.field(
        description="Its place among the chunk's passages: 1 is the first after the head "
        "(the head is the chunk's own vector)."
    )
    start_char: int = strawberry.field(description="Its first character in the hit's text.")
    end_char: int = strawberry.field(
        description="The character after its last in the hit's text (exclusive)."
    )


@strawberry.type(description="One ranked list's share of a hit's score: weight / (k + rank).")
class ScoreLeg:
    leg: str = strawberry.field(
        description="vector, fulltext, or session (the session prior: the rank of the "
        "chunk's document by its candidates' fused scores; value: that sum), or entities "
        "(the entity step's second full-text query; value: its scope-local BM25)"
    )
    rank: int
    contribution: float
    value: float | None = strawberry.field(
        description="The leg's own score: the cosine, or BM25 with the scope's own statistics "
        "(null when the leg did not return the row)."
    )
    beyond_depth: bool = strawberry.field(
        description="The leg did not return the row: it counts as ranked just past the leg's "
        "pool (rank = pool + 1)."
    )
    weight: float = strawberry.field(
        description="The leg's weight in the fusion: `weights`, else the server's setting."
    )
    passage: ScorePassage | None = strawberry.field(
        default=None,
        description="vector leg of a long chunk: the passage whose vector scored it (null when "
        "the chunk's own vector, its head, did, and for every other leg).",
    )


@strawberry.type(description="A preference read from the question that multiplied the score.")
class ScoreBoost:
    lever: str = strawberry.field(
        description="observedDate, whenQuestion, yearRange, timeRange, whenSpecific, "
        "speaker, or recency (`recencyHalfLife`: 2^(-age / halfLife))"
    )
    factor: float


@strawberry.type(description="Days a time expression of the row names, resolved at ingest.")
class TimeRange:
    start: date = strawberry.field(description="The first day.")
    end: date = strawberry.field(description="The day after the last (the range is [start, end)).")


@strawberry.type(description="A hit `dedup` dropped as a near-duplicate of this one.")
class ScoreDuplicate:
    kind: pure.Source
    scope: Scope
    id: ID
    cosine: float = strawberry.field(description="Its cosine with this hit's embedding.")
    score: float = strawberry.field(description="Its own score, before it was dropped.")


@strawberry.type(
    description="The hit the newer-first lever placed this one just above: of the same "
    "matter, told earlier."
)
class ScoreNewer:
    kind: pure.Source
    scope: Scope
    id: ID
    cosine: float = strawberry.field(description="Its cosine with this hit's embedding.")


@strawberry.type(description="Why a hit scored what it did: score = fused x every factor.")
class Explain:
    legs: list[ScoreLeg]
    boosts: list[ScoreBoost]
    fused: float = strawberry.field(description="The RRF sum over the legs, before boosts.")
    duplicates: list[ScoreDuplicate] = strawberry.field(
        description="The hits `dedup` dropped because each duplicated this one (empty without "
        "`dedup`)."
    )
    floor: str | None = strawberry.field(
        description="What kept the hit above `minScore`: cosine (its cosine is at or above "
        "it) or fulltext (no cosine, and its full-text rank is within topK); null without "
        "`minScore`."
    )
    document_place: int | None = strawberry.field(
        description="Its place among its document's hits, at most `maxPerDocument` (null "
        "without it, or for a row of no document)."
    )
    time_ranges: list[TimeRange] = strawberry.field(
        description="The row's time expressions resolved at ingest against its observedAt, "
        "that the time boosts read (empty when they are off or it has none)."
    )
    form: str | None = strawberry.field(
        default=None,
        description="The question's form (when, who, where, how_many, why, how, yes_no, list, "
        "what, other) whose fusion weights and boosts the legs and boosts above used.",
    )
    text_engine: str | None = strawberry.field(
        default=None,
        description="Which engine read the full-text leg that ranked this hit: procedure "
        "(Palimpsest's Neo4j extension) or cypher; null when no full-text leg ranked it. "
        "`PALIMPSEST_SEARCH_ENGINE` chooses; /readyz says which is in use.",
    )
    newer_than: ScoreNewer | None = strawberry.field(
        default=None,
        description="The hit the newer-first lever placed this one above (null when it did "
        "not move it, or the lever is off).",
    )

    @classmethod
    def of(cls, e: ops.Explain) -> Explain:
        return cls(
            legs=[
                ScoreLeg(
                    leg=p.leg,
                    rank=p.rank,
                    contribution=p.contribution,
                    value=p.value,
                    beyond_depth=p.beyond_depth,
                    weight=p.weight,
                    passage=None
                    if p.passage is None
                    else ScorePassage(
                        index=p.passage.seq, start_char=p.passage.start, end_char=p.passage.end
                    ),
                )
                for p in e.legs
            ],
            boosts=[ScoreBoost(lever=b.lever, factor=b.factor) for b in e.boosts],
            fused=e.fused,
            duplicates=[
                ScoreDuplicate(
                    kind=d.kind, scope=d.scope, id=ID(d.id), cosine=d.cosine, score=d.score
                )
                for d in e.duplicates
            ],
            floor=e.floor,
            document_place=e.document_place,
            time_ranges=[TimeRange(start=r.start, end=r.end) for r in e.time_ranges],
            form=e.form,
            text_engine=e.text_engine,
            newer_than=None
            if e.newer_than is None
            else ScoreNewer(
                kind=e.newer_than.kind,
                scope=e.newer_than.scope,
                id=ID(e.newer_than.id),
                cosine=e.newer_than.cosine,
            ),
        )


@strawberry.type(
    description="One recalled row with its fused score, the raw cosine and its "
    "rank in each leg (null when the leg did not return it)."
)
class RecallHit:
    kind: pure.Source
    scope: Scope
    id: ID = strawberry.field(description="The fact's or chunk's id, or the note's key.")
    text: str
    score: float
    cosine: float | None
    vector_rank: int | None
    fulltext_rank: int | None
    key: str | None
    document_id: ID | None
    chunk_type: ChunkType | None
    fact: Fact | None
    observed_at: datetime | None
    created_at: datetime | None
    in_window: bool | None
    provenance: Provenance | None
    explain: Explain | None = strawberry.field(
        description="Which legs and boosts made the score (null only for rows never fused)."
    )

    @classmethod
    def of(cls, h: ops.Hit) -> RecallHit:
        return cls(
            kind=h.kind,
            scope=h.scope,
            id=ID(h.id),
            text=h.text,
            score=h.score,
            cosine=h.cosine,
            vector_rank=h.vector_rank,
            fulltext_rank=h.fulltext_rank,
            key=h.key,
            document_id=ID(h.document_id) if h.document_id else None,
            chunk_type=ChunkType(h.chunk_type) if h.chunk_type else None,
            fact=Fact.of(h.fact) if h.fact else None,
            observed_at=h.observed_at,
            created_at=h.created_at,
            in_window=h.in_window,
            provenance=Provenance.of(h.provenance) if h.provenance else None,
            explain=Explain.of(h.explain) if h.explain else None,
        )


@strawberry.type(
    description="What the per-call controls did to the candidates (all of them, before the "
    "topK cut); null when none of minScore, recencyHalfLife, maxPerDocument was given."
)
class RecallControls:
    min_score: float | None
    below_min_score: int = strawberry.field(description="Candidates the floor dropped.")
    recency_half_life_seconds: int | None
    recency_reference: datetime | None = strawberry.field(
        description="Where ages were measured from: when.to, else the query time."
    )
    max_per_document: int | None
    over_document_cap: int = strawberry.field(description="Candidates dropped past maxPerDocument.")

    @classmethod
    def of(cls, r: ops.ControlsReport) -> RecallControls:
        return cls(
            min_score=r.min_score,
            below_min_score=r.below_min_score,
            recency_half_life_seconds=r.half_life_seconds,
            recency_reference=r.reference,
            max_per_document=r.max_per_document,
            over_document_cap=r.over_document_cap,
        )


@strawberry.type
class RecallResult:
    hits: list[RecallHit]
    sources_applied: bool = strawberry.field(
        description="True only when the source selector was applied; false is the safe default."
    )
    time_filter: TimeFilter | None
    scopes: list[Scope]
    applied_filters: list[KindFilter] = strawberry.field(
        description="Per kind of row asked for, the temporal filters applied to it (notes "
        "and facts: asOf always, knownAt when given; every kind: window when given)."
    )
    controls: RecallControls | None


async def _run(
    info: Info,
    scope: Scope,
    query: str,
    top_k: int,
    sources: list[pure.Source] | None,
    when: WhenInput | None,
    prefix: str,
    also_scopes: list[Scope] | None,
    search: bool,
    dedup: float | None = None,
    controls: ops.Controls | None = None,
) -> RecallResult:
    c = info.context
    w = when or WhenInput()
    ask = ops.Ask(
        query=query,
        scope=scope,
        top_k=top_k,
        sources=[s.value for s in sources] if sources is not None else None,
        when=ops.When(
            start=w.from_,
            end=w.to,
            missing=w.missing.value if w.missing else None,
            slack=w.slack,
            as_of=w.as_of,
            known_at=w.known_at,
        ),
        prefix=prefix,
        also_scopes=also_scopes or (),
        dedup=dedup,
        controls=controls or ops.Controls(),
    )
    run = ops.search if search else ops.recall
    result = await run(c.services, c.principal, ask)
    report = result.time_filter
    return RecallResult(
        hits=[RecallHit.of(h) for h in result.hits],
        sources_applied=result.sources_applied,
        time_filter=TimeFilter(
            mode=TimeFilterMode(report.mode),
            slack_seconds=report.slack_seconds,
            in_window=report.in_window,
            out_of_window=report.out_of_window,
            undated=report.undated,
        )
        if report
        else None,
        scopes=result.scopes,
        applied_filters=[
            KindFilter(kind=k.kind, filters=[TemporalFilter(f) for f in k.filters])
            for k in result.applied_filters
        ],
        controls=RecallControls.of(result.controls) if result.controls else None,
    )


@strawberry.type
class RecallQuery:
    @strawberry.field(
        description="Recall memories (facts and notes by default) for a query: "
        "vector and full-text legs fused by RRF inside the scope. `alsoScopes` "
        "merges more scopes explicitly; each hit names its scope.",
        metadata=costs(Searches(default_sources=2)),
    )
    async def recall(
        self,
        info: Info,
        scope: Scope,
        query: str,
        top_k: int = ops.DEFAULT_TOP_K,
        sources: list[pure.Source] | None = None,
        when: WhenInput | None = None,
        prefix: str = "",
        also_scopes: list[Scope] | None = None,
        dedup: DedupArg = None,
        min_score: MinScoreArg = None,
        recency_half_life: HalfLifeArg = None,
        weights: WeightsArg = None,
        max_per_document: PerDocumentArg = None,
    ) -> RecallResult:
        controls = ops.Controls.of(min_score, recency_half_life, weights, max_per_document)
        return await _run(
            info, scope, query, top_k, sources, when, prefix, also_scopes, False, dedup, controls
        )

    @strawberry.field(
        description="Search every kind of row (facts, notes and document chunks "
        "by default) with the same hybrid ranking as recall.",
        metadata=costs(Searches(default_sources=3)),
    )
    async def search(
        self,
        info: Info,
        scope: Scope,
        query: str,
        top_k: int = ops.DEFAULT_TOP_K,
        sources: list[pure.Source] | None = None,
        when: WhenInput | None = None,
        prefix: str = "",
        also_scopes: list[Scope] | None = None,
        dedup: DedupArg = None,
        min_score: MinScoreArg = None,
        recency_half_life: HalfLifeArg = None,
        weights: WeightsArg = None,
        max_per_document: PerDocumentArg = None,
    ) -> RecallResult:
        controls = ops.Controls.of(min_score, recency_half_life, weights, max_per_document)
        return await _run(
            info, scope, query, top_k, sources, when, prefix, also_scopes, True, dedup, controls
        )
