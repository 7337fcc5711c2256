"""A fact on its way into the graph: checked, keyed and resolved, one frozen row (no I/O here).

``resolvers.fact_input.prepare`` makes a ``FactRow`` from each draft; every later step of the
write (sources, entities, closure, dedup, full-text fields, quotes) returns a new row made with
``dataclasses.replace``. ``fact_params`` is the one encoder: it turns rows into the ``$facts``
maps the fact statements read (``cypher/facts.py`` ``KEY_CONFLICTS``, ``ASSERT_FACTS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from palimpsest.embedding.slots import DualVector


@dataclass(frozen=True, slots=True)
class FactRow:
    """One fact of a batch as the write statement stores it."""

    index: int  # the draft's position in its batch
    id: str
    natural_key: str
    # The caller named the fact's identity: it is never merged by similarity (dedup).
    key_given: bool
    subject_type: str
    subject_name: str
    subject_norm: str
    subject_key: str | None
    subject_id: str
    subject_label: str
    object_type: str
    object_name: str
    object_norm: str
    # A literal value is only ever itself: "3.5" and "3,5" stay two values (no key).
    object_key: str | None
    object_id: str
    object_label: str
    object_is_value: bool
    predicate: str
    predicate_key: str
    text: str
    observed_at: datetime | None
    valid_at: datetime | None
    invalid_at: datetime | None
    source_chunk_id: str | None
    source_start: int | None
    source_end: int | None
    quote: str | None
    share_quote: bool
    # Set under the scope's lock (``resolvers.closure.prepare``).
    single_spellings: tuple[str, ...] | None = None
    # Filled from the chunk when the source is resolved (``resolvers.facts.resolve_sources``).
    source_text: str | None = None
    source_key: str | None = None
    source_document_id: str | None = None
    origin_key: str | None = None
    origin_scope: str | None = None
    mention_chunk_id: str | None = None
    # Set for a quote of another scope (``resolvers.quotes.withhold``).
    source_shared: bool | None = None
    compaction_generation: int | None = None
    embedding: Sequence[float] | None = None  # ``resolvers.facts.embed_rows``
    merged: bool = False  # a near-duplicate pointed at the fact it duplicates (dedup)
    # The stored full-text representation and cues (``resolvers.term_index.row_fields``).
    ft: str | None = None
    ft_tf: Sequence[int] | None = None
    ft_len: int | None = None
    years: Sequence[int] | None = None
    has_time: bool | None = None
    speaker: str | None = None
    # An extractor's stamp (``FactDraft.extracted_by``): the new fact's ``judged_by``.
    judged_by: str | None = None

    def terms(self) -> dict[str, Any]:
        """The stored representation, as ``term_index.added`` reads it."""
        return {"ft": self.ft, "ft_tf": self.ft_tf, "speaker": self.speaker}


_NAMES = tuple(f.name for f in fields(FactRow))


def fact_params(rows: Sequence[FactRow]) -> list[dict[str, Any]]:
    """The ``$facts`` parameter of the fact write statements: one map per row."""
    out = []
    for row in rows:
        item = {name: getattr(row, name) for name in _NAMES}
        item["single_spellings"] = _listed(row.single_spellings)
        # A migration's DualVector as it is: the executor splits it (cypher/slots.py).
        vector = row.embedding
        item["embedding"] = vector if isinstance(vector, DualVector) else _listed(vector)
        out.append(item)
    return out


def _listed(values: Sequence[Any] | None) -> list[Any] | None:
    return None if values is None else list(values)


def near_duplicate_params(rows: Sequence[FactRow]) -> list[dict[str, Any]]:
    """The ``$facts`` parameter of ``cypher/dedup.py`` ``NEAR_DUPLICATE_FACTS``."""
    return [
        {
            "index": r.index,
            "natural_key": r.natural_key,
            "subject_type": r.subject_type,
            "subject_norm": r.subject_norm,
            "predicate_key": r.predicate_key,
            "embedding": _listed(r.embedding),
        }
        for r in rows
    ]
