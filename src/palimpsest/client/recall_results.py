"""Results of facts, entities, recall and search, placement and the ontology."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from palimpsest.client.enums import (
    ChunkType,
    ClosureReason,
    ContextKind,
    OntologyStatus,
    Origin,
    PairVerdict,
    PlacementReason,
    Scope,
    Source,
    TemporalFilter,
    TimeFilterMode,
    Verdict,
)
from palimpsest.client.results import ChunkRef, Provenance


@dataclass(frozen=True, slots=True)
class ContextBlock:
    """Memory for a turn in one block within a token budget, each line citing its id."""

    text: str
    tokens: int
    truncated: bool
    items: list[ContextItem]


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One piece of a context block, in the block's order."""

    kind: ContextKind
    source: Source
    scope: Scope
    id: str
    tokens: int
    cut: bool


@dataclass(frozen=True, slots=True)
class Entity:
    id: str
    type: str
    name: str
    aliases: list[str]
    provenance: Provenance | None


@dataclass(frozen=True, slots=True)
class EntityDuplicate:
    """Two entities that may be one, why, and how strongly."""

    a: Entity
    b: Entity
    reason: str
    figure: float


@dataclass(frozen=True, slots=True)
class EntityDuplicatePage:
    """One page of a list, in the list's stable order."""

    items: list[EntityDuplicate]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class EntityMerge:
    """One merge of entities into ``keep_id``: what it moved, and whether it was undone."""

    id: str
    keep_id: str
    merged_ids: list[str]
    added_aliases: list[str]
    facts_moved: int
    mentions_moved: int
    created_at: datetime
    undone_at: datetime | None


@dataclass(frozen=True, slots=True)
class EntityPage:
    """One page of a list, in the list's stable order."""

    items: list[Entity]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class TimeRange:
    """Days a time expression of the row names, resolved at ingest: [start, end)."""

    start: date
    end: date


@dataclass(frozen=True, slots=True)
class Explain:
    """Why a hit scored what it did: score = fused x every factor."""

    legs: list[ScoreLeg]
    boosts: list[ScoreBoost]
    fused: float
    duplicates: list[ScoreDuplicate]
    floor: str | None
    document_place: int | None
    time_ranges: list[TimeRange]
    form: str | None
    text_engine: str | None  # procedure or cypher: which engine read its full-text leg
    newer_than: ScoreNewer | None = None


@dataclass(frozen=True, slots=True)
class Fact:
    """A bi-temporal fact. validAt/invalidAt: world time (half-open); createdAt/expiredAt: when
    this server recorded and retired it.
    """

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
    verdict: Verdict | None
    judge_reason: str | None
    provenance: Provenance
    sources: list[FactSource]


@dataclass(frozen=True, slots=True)
class FactAssertion:
    fact: Fact
    created: bool
    placement: PlacementResult | None
    closed: list[FactClosure]
    merged: str | None


@dataclass(frozen=True, slots=True)
class FactClosure:
    """A fact the write closed: it now ends at invalidAt, where the fact byId starts (a
    supersession: `supersededBy` and `expiredAt` are set, and reads as of earlier times and at
    earlier knownAt still see it).
    """

    fact: Fact
    invalid_at: datetime
    reason: ClosureReason
    by_id: str
    same_start: bool


@dataclass(frozen=True, slots=True)
class FactConflict:
    """Two facts of one subject and predicate, close in meaning but not merged, and what the
    operator's model judged of them (null until judged). A verdict never closes or deletes a
    fact.
    """

    id: str
    older: Fact
    newer: Fact
    cosine: float
    created_at: datetime
    verdict: PairVerdict | None
    reason: str | None
    judged_by: str | None
    judged_at: datetime | None


@dataclass(frozen=True, slots=True)
class FactConflictPage:
    """One page of a list, in the list's stable order."""

    items: list[FactConflict]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class FactPage:
    """One page of a list, in the list's stable order."""

    items: list[Fact]
    cursor: str | None
    has_more: bool


@dataclass(frozen=True, slots=True)
class FactSource:
    """A span of a chunk that attests a fact."""

    chunk_id: str
    document_id: str | None
    start: int
    end: int
    text: str | None
    origin_scope: Scope | None
    added_at: datetime
    origin: Origin | None


@dataclass(frozen=True, slots=True)
class GraphRecallResult:
    seeds: list[Entity]
    entities: list[Entity]
    facts: list[Fact]
    chunks: list[ChunkRef]


@dataclass(frozen=True, slots=True)
class HarvestReceipt:
    """What harvest banked. Accepted spans are durable on return."""

    accepted: int
    duplicates: int
    span_ids: list[str]
    compaction_generation: int


@dataclass(frozen=True, slots=True)
class JudgeConflictsResult:
    """What ``judgeConflicts`` did: pairs asked about, verdicts recorded and dropped, pairs
    whose call failed or the day's token cap refused, and the scope's pairs still pending."""

    asked: int
    judged: int
    dropped: int
    failed: int
    refused: int
    pending: int


@dataclass(frozen=True, slots=True)
class KindFilter:
    """The temporal filters recall applied to one kind of row."""

    kind: Source
    filters: list[TemporalFilter]


@dataclass(frozen=True, slots=True)
class OntologyInfo:
    """The tenant's ontology as stored (Markdown). A caller without TENANT that writes facts in
    its own scope reads only what shapes those writes: `singleValued` while the ontology is
    confirmed, no `markdown`, `updatedBy` or `updatedAt`; an ontology that closes nothing reads
    as none.
    """

    markdown: str | None
    status: OntologyStatus
    updated_at: datetime | None
    updated_by: str | None
    single_valued: list[SingleValuedPredicate]


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """Where one fact goes and why; it stays in the requested scope whenever anything is uncertain.
    A caller without TENANT on the memory plane (where the ontology lives) gets only `ISOLATED`
    or `NO_TENANT_ACCESS`, with no ontology detail.
    """

    scope: Scope
    moved: bool
    reason: PlacementReason
    message: str
    advisory: str | None
    entity_type: str | None
    single_valued: list[str]


@dataclass(frozen=True, slots=True)
class RecallControls:
    """The recall controls a call applied, and how many rows each dropped."""

    min_score: float | None
    below_min_score: int
    recency_half_life_seconds: int | None
    recency_reference: datetime | None
    max_per_document: int | None
    over_document_cap: int


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One recalled row with its fused score, the raw cosine and its rank in each leg (null when
    the leg did not return it).
    """

    kind: Source
    scope: Scope
    id: str
    text: str
    score: float
    cosine: float | None
    vector_rank: int | None
    fulltext_rank: int | None
    key: str | None
    document_id: str | None
    chunk_type: ChunkType | None
    fact: Fact | None
    observed_at: datetime | None
    created_at: datetime | None
    in_window: bool | None
    provenance: Provenance | None
    explain: Explain | None


@dataclass(frozen=True, slots=True)
class RecallResult:
    hits: list[RecallHit]
    sources_applied: bool
    time_filter: TimeFilter | None
    scopes: list[Scope]
    applied_filters: list[KindFilter]
    controls: RecallControls | None


@dataclass(frozen=True, slots=True)
class ScoreBoost:
    """A preference read from the question that multiplied the score."""

    lever: str
    factor: float


@dataclass(frozen=True, slots=True)
class ScoreNewer:
    """The hit the newer-first lever placed this one just above: of the same matter, told
    earlier."""

    kind: Source
    scope: Scope
    id: str
    cosine: float


@dataclass(frozen=True, slots=True)
class ScoreDuplicate:
    """A hit `dedup` dropped as a near-duplicate of this one."""

    kind: Source
    scope: Scope
    id: str
    cosine: float
    score: float


@dataclass(frozen=True, slots=True)
class ScorePassage:
    """The passage of a long chunk whose vector gave the vector leg its value: a window of the
    chunk's text past the start the embedding model reads."""

    index: int
    start_char: int
    end_char: int


@dataclass(frozen=True, slots=True)
class ScoreLeg:
    """One ranked list's share of a hit's score: weight / (k + rank)."""

    leg: str
    rank: int
    contribution: float
    value: float | None
    beyond_depth: bool
    weight: float
    passage: ScorePassage | None = None


@dataclass(frozen=True, slots=True)
class SingleValuedPredicate:
    """A predicate subjects of a type hold one value of at a time (`single:`, own or inherited): a
    newer fact with another object closes the one it replaces.
    """

    entity_type: str
    predicate: str
    spellings: list[str]
    type_spellings: list[str]


@dataclass(frozen=True, slots=True)
class SupersedeResult:
    retired: Fact
    replacement: Fact
    already: bool


@dataclass(frozen=True, slots=True)
class TimeFilter:
    mode: TimeFilterMode
    slack_seconds: int
    in_window: int
    out_of_window: int
    undated: int
