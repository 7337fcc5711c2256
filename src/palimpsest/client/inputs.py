"""Input objects; a field left None is not sent, so the server's default applies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from palimpsest.client.enums import MemoryFileEdit, MissingDates, Scope, Source


@dataclass(frozen=True, slots=True)
class DocumentInput:
    markdown: str
    title: str | None = None
    path: str | None = None
    observed_at: datetime | str | None = None
    new_document: bool | None = None


@dataclass(frozen=True, slots=True)
class EntityInput:
    type: str
    name: str


@dataclass(frozen=True, slots=True)
class FactInput:
    subject: EntityInput
    predicate: str
    object: EntityInput | None = None
    object_value: str | None = None
    text: str | None = None
    natural_key: str | None = None
    observed_at: datetime | str | None = None
    valid_at: datetime | str | None = None
    invalid_at: datetime | str | None = None
    source: SourceInput | None = None
    quote: str | None = None
    share_quote: bool | None = None


@dataclass(frozen=True, slots=True)
class LegWeightsInput:
    """Each leg's weight in recall's fusion (unset: the server's)."""

    vector: float | None = None
    fulltext: float | None = None


@dataclass(frozen=True, slots=True)
class MemoryFileCommandInput:
    """One memory file command; which fields it needs depends on ``command``."""

    command: MemoryFileEdit
    path: str | None = None
    file_text: str | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    insert_text: str | None = None
    old_path: str | None = None
    new_path: str | None = None


@dataclass(frozen=True, slots=True)
class PlacementItemInput:
    entity_type: str | None = None
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class SourceInput:
    """The span of a chunk (character offsets into its text) a fact was taken from."""

    chunk_id: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SpanInput:
    """One span of dialogue the runtime evicted from its context."""

    text: str
    speaker: str | None = None
    role: str | None = None
    observed_at: datetime | str | None = None
    source_id: str | None = None
    facts: list[FactInput] | None = None


@dataclass(frozen=True, slots=True)
class SqlStatementInput:
    """One statement of an sqlExec batch."""

    statement: str
    args: Any = None


@dataclass(frozen=True, slots=True)
class WhenInput:
    """Time filters. from/to bound observedAt; asOf/knownAt filter facts by validity and by what
    was recorded then.
    """

    from_: datetime | str | None = None
    to: datetime | str | None = None
    missing: MissingDates | None = None
    slack: str | None = None
    as_of: datetime | str | None = None
    known_at: datetime | str | None = None


class RecallOptions(TypedDict, total=False):
    """The options ``search`` and ``recall`` take beside scope and query (None: the default)."""

    top_k: int | None
    sources: Sequence[Source | str] | None
    when: WhenInput | None
    prefix: str | None
    also_scopes: Sequence[Scope | str] | None
    dedup: float | None
    min_score: float | None
    recency_half_life: str | None
    weights: LegWeightsInput | None
    max_per_document: int | None
