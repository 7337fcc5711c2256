"""``context``: the one call a runtime makes per turn (docs/reference/context.md).

For a query and a token budget it packs, in this order, the pinned notes of the scopes, the
current facts about the entities the query names, and the best ``search`` hits above a floor
on their cosine (recall's ``minScore``), each piece citing the id it came from
(``packing.py``). Without the floor a question about nothing the scope holds packed the whole
scope into a large budget: the search always answers its topK.

Scopes are resolved first, exactly as recall resolves them (``scope`` then ``alsoScopes``,
each read in its own scope only); the hits come from the recall core
(``recall_asks.search``), never from a second assembly of recall.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from palimpsest.cypher import context as q
from palimpsest.cypher import memory as mq
from palimpsest.cypher import note_versions as vq
from palimpsest.domain.notes import values
from palimpsest.domain.ranking import fusion as pure
from palimpsest.domain.ranking import packing
from palimpsest.embedding import count_tokens
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.ontology import extractors
from palimpsest.resolvers.facts.decode import fact_from
from palimpsest.resolvers.facts.inputs import VALUE_TYPE
from palimpsest.resolvers.facts.ledger import TimeView, time_view
from palimpsest.resolvers.notes import versions as note_versions
from palimpsest.resolvers.recall import asks, controls
from palimpsest.resolvers.recall.planner import MAX_QUERY_CHARS
from palimpsest.resolvers.services import Services
from palimpsest.schema.models import Fact

DEFAULT_BUDGET_TOKENS = 2000
MAX_PINNED = 100  # pinned notes read per scope
MAX_FACTS = 50  # facts about the named entities read per scope
TOKENS_PER_HIT = 40  # hits asked of search: budget / this, from 10 up to its limit of 50


@dataclass(frozen=True, slots=True)
class ContextItem:
    """One piece of the block: ``kind`` is ``pinned``, ``fact`` or ``hit``; ``source`` the
    kind of row it came from; ``id`` a note's key or a fact's or chunk's id."""

    kind: str
    source: pure.Source
    scope: Scope
    id: str
    tokens: int
    cut: bool  # only its first whole sentences fitted


@dataclass(frozen=True, slots=True)
class ContextBlock:
    text: str
    tokens: int
    truncated: bool
    items: tuple[ContextItem, ...]


@dataclass(frozen=True, slots=True)
class _Candidate:
    kind: str
    source: pure.Source
    scope: Scope
    id: str
    body: str


async def context(
    svc: Services,
    who: Principal,
    scope: Scope,
    query: str,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    also_scopes: Sequence[Scope] = (),
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    min_score: float | None = None,
) -> ContextBlock:
    """``min_score``: recall's floor on the search hits (None: ``context_min_score``)."""
    refs = [resolve_scope(who, s) for s in dict.fromkeys([scope, *also_scopes])]
    cap = svc.settings.recall.context_max_budget_tokens
    if not 1 <= budget_tokens <= cap:
        raise InvalidArgument(f"budgetTokens must be between 1 and {cap}", limit=cap)
    if not query.strip() or len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query must be 1-{MAX_QUERY_CHARS} characters")
    floor = asks.Controls(
        min_score=svc.settings.recall.context_min_score if min_score is None else min_score,
        fulltext_within=asks.DEFAULT_TOP_K,
    )
    controls.check(floor, None)  # refused before anything is read, not inside the gather
    view = time_view(svc, as_of, known_at)
    names = sorted(extractors.candidates(query))
    ask = asks.Ask(
        query,
        scope,
        top_k_for(budget_tokens),
        when=asks.When(as_of=as_of, known_at=known_at),
        also_scopes=also_scopes,
        controls=floor,
    )
    # The reads are independent: run at once, packed in the order pinned, facts, hits.
    *parts, hits = await asyncio.gather(
        *(_pinned(svc, ref, view) for ref in refs),
        *(_facts(svc, who, ref, view, names) for ref in refs),
        _hits(svc, who, ask),
    )
    found = [c for part in parts for c in part]
    seen = {(c.source, c.scope, c.id) for c in found}
    found += [h for h in hits if (h.source, h.scope, h.id) not in seen]
    return _block(svc, scope, found, budget_tokens)


async def _pinned(svc: Services, ref: ScopeRef, view: TimeView) -> list[_Candidate]:
    now = svc.clock()
    known = note_versions.known_params(view.known_at, now)
    statement = mq.PINNED_NOTES if known is None else vq.PINNED_NOTES_KNOWN
    params = {"now": now, "as_of": view.as_of, "known_at": known, "limit": MAX_PINNED}
    rows = await svc.db.scoped(ref).read(statement, params)
    return [
        _Candidate("pinned", pure.Source.NOTES, ref.scope, r["key"], _note_text(r["value"]))
        for r in rows
    ]


async def _facts(
    svc: Services, who: Principal, ref: ScopeRef, view: TimeView, names: list[str]
) -> list[_Candidate]:
    if not names:
        return []
    params = {**view.params(), "names": names, "value_type": VALUE_TYPE, "limit": MAX_FACTS}
    rows = await svc.db.scoped(ref).read(q.ENTITY_FACTS, params)
    facts = [fact_from(ref.scope, row, who) for row in rows]
    return [_Candidate("fact", pure.Source.FACTS, f.scope, f.id, _fact_text(f)) for f in facts]


def top_k_for(budget: int) -> int:
    """The hits ``context`` asks search for under ``budget``."""
    return max(asks.DEFAULT_TOP_K, min(asks.MAX_TOP_K, budget // TOKENS_PER_HIT))


async def _hits(svc: Services, who: Principal, ask: asks.Ask) -> list[_Candidate]:
    """The search hits (every kind of row) with text."""
    result = await asks.search(svc, who, ask)
    return [_Candidate("hit", h.kind, h.scope, h.id, h.text) for h in result.hits if h.text.strip()]


def _block(svc: Services, scope: Scope, found: list[_Candidate], budget: int) -> ContextBlock:
    pieces = [packing.Piece(_cite(c, scope), c.body) for c in found]
    block = packing.pack(pieces, budget, lambda texts: count_tokens(svc.embedder, texts))
    items = tuple(_item(found[p.index], p) for p in block.packed)
    return ContextBlock(block.text, block.tokens, block.truncated, items)


def _item(c: _Candidate, p: packing.Packed) -> ContextItem:
    return ContextItem(c.kind, c.source, c.scope, c.id, p.tokens, p.cut)


_CITE_KIND = {pure.Source.NOTES: "note", pure.Source.FACTS: "fact", pure.Source.DOCUMENTS: "chunk"}


def _cite(c: _Candidate, scope: Scope) -> str:
    """``[note:key]``, ``[fact:id]``, ``[chunk:id]``; a piece of another scope than the call's
    own names it first: ``[TENANT/note:key]``."""
    where = "" if c.scope == scope else f"{c.scope.value}/"
    return f"[{where}{_CITE_KIND[c.source]}:{c.id}]"


def _note_text(stored: str) -> str:
    value = values.decode(stored)
    return value if isinstance(value, str) else stored


def _fact_text(f: Fact) -> str:
    return f.text or f"{f.subject.name} {f.predicate} {f.object.name}"
