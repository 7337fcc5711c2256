"""What one recall asks of the planner (``planner.recall``): the question, its mode, the
sources and time view it reads, and the fusion settings, levers and per-call controls.

Its own module, below the planner and the question forms (``forms.apply`` rewrites a request
before the planner reads it), so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from palimpsest.domain.ranking import fusion as pure
from palimpsest.resolvers.facts.ledger import TimeView
from palimpsest.resolvers.recall import controls as recall_controls

__all__ = ["Mode", "RecallRequest"]


class Mode(StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    FULLTEXT = "fulltext"


@dataclass(frozen=True, slots=True)
class RecallRequest:
    query: str
    top_k: int
    sources: frozenset[pure.Source]
    view: TimeView
    window: pure.Window | None = None
    prefix: str = ""
    rrf_k: int = pure.DEFAULT_RRF_K
    vector_weight: float = 1.0
    fulltext_weight: float = 1.0
    mode: Mode = Mode.HYBRID
    pool: int | None = None  # candidates per leg; default pool_factor x top_k, capped
    pool_factor: int = 2
    levers: pure.Levers = field(default_factory=pure.Levers)
    dedup: float | None = None  # drop near-duplicate hits at this cosine (recall_dedup)
    controls: recall_controls.Applied = field(default_factory=recall_controls.Applied)
    weights_given: bool = False  # the call's own leg weights: the question's form keeps them
    form: str | None = None  # set by the planner (recall_forms.apply), shown in explain
