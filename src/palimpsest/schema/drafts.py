"""Facts as a caller states them, before the resolvers check and key them (no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class EntityRef:
    type: str
    name: str


@dataclass(frozen=True, slots=True)
class SourceRef:
    chunk_id: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class FactDraft:
    """One fact as a caller states it."""

    subject: EntityRef
    predicate: str
    object: EntityRef | None
    object_value: str | None
    text: str | None = None
    natural_key: str | None = None
    observed_at: datetime | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    source: SourceRef | None = None
    # The words of the source the fact was taken from (a substring of it): the source is
    # narrowed to them. ``share_quote``: the quoted text may go where placement moves the fact.
    quote: str | None = None
    share_quote: bool = False
    # Who drew the fact from free text (``model:<prompt version>:<model name>``), stamped as
    # the fact's ``judged_by`` when it is created; None for facts a caller stated.
    extracted_by: str | None = None
