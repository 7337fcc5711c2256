"""``recall`` and ``search`` as every door calls them: the caller's arguments in, the limits
checked and the ranking settings applied here, the planner (``resolvers.recall``) run.

GraphQL fields, MCP tools and the CLI only parse and render; none builds a ``RecallRequest``
or holds a default of its own, so the same arguments get the same hits and the same errors
whichever door they came through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from palimpsest.domain.ranking import fusion as pure
from palimpsest.domain.ranking.dedup import check_threshold
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.facts.ledger import time_view
from palimpsest.resolvers.recall.controls import Controls, LegWeights, check, leg_weights
from palimpsest.resolvers.recall.planner import RecallResult
from palimpsest.resolvers.recall.planner import recall as plan
from palimpsest.resolvers.recall.request import RecallRequest
from palimpsest.resolvers.services import Services

MAX_TOP_K = 50
DEFAULT_TOP_K = 10
__all__ = ["Ask", "Controls", "LegWeights", "When", "recall", "request_of", "search"]


@dataclass(frozen=True, slots=True)
class When:
    """The time arguments: ``start``/``end`` bound ``observedAt`` (a soft window with
    ``missing`` and ``slack``); ``as_of``/``known_at`` read facts as of then."""

    start: datetime | None = None
    end: datetime | None = None
    missing: str | None = None
    slack: str | None = None
    as_of: datetime | None = None
    known_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """One recall or search as the caller states it; ``sources`` are source names."""

    query: str
    scope: Scope = Scope.USER
    top_k: int = DEFAULT_TOP_K
    sources: Sequence[str] | None = None
    when: When = When()
    prefix: str = ""
    also_scopes: Sequence[Scope] = ()
    dedup: float | None = None  # a cosine threshold: drop near-duplicate hits (None: off)
    # minScore, recencyHalfLife, weights and maxPerDocument (resolvers/recall/controls.py)
    controls: Controls = field(default_factory=Controls)


async def recall(svc: Services, who: Principal, ask: Ask) -> RecallResult:
    """Facts and notes by default."""
    return await _run(svc, who, ask, pure.RECALL_DEFAULT)


async def search(svc: Services, who: Principal, ask: Ask) -> RecallResult:
    """Every kind of row (facts, notes and document chunks) by default."""
    return await _run(svc, who, ask, pure.SEARCH_DEFAULT)


def request_of(svc: Services, ask: Ask, default: frozenset[pure.Source]) -> RecallRequest:
    """The planner's request for ``ask``, with the server's ranking settings."""
    if not 1 <= ask.top_k <= MAX_TOP_K:
        raise InvalidArgument(f"topK (top_k) must be between 1 and {MAX_TOP_K}")
    w, settings = ask.when, svc.settings
    vector_weight, fulltext_weight = leg_weights(
        ask.controls.weights, settings.recall.rrf_vector_weight, settings.recall.rrf_fulltext_weight
    )
    return RecallRequest(
        query=ask.query,
        top_k=ask.top_k,
        sources=pure.parse_sources(ask.sources, default),
        view=time_view(svc, w.as_of, w.known_at),
        window=pure.parse_window(w.start, w.end, w.missing, w.slack),
        prefix=ask.prefix,
        rrf_k=settings.recall.rrf_k,
        pool_factor=settings.recall.pool_factor,
        vector_weight=vector_weight,
        fulltext_weight=fulltext_weight,
        levers=pure.Levers.of(settings),
        dedup=check_threshold(ask.dedup),
        controls=check(ask.controls, w.end),
        weights_given=ask.controls.weights is not None,
    )


async def _run(
    svc: Services, who: Principal, ask: Ask, default: frozenset[pure.Source]
) -> RecallResult:
    req = request_of(svc, ask, default)
    return await plan(svc, who, [ask.scope, *ask.also_scopes], req)
