"""Recall's ranking of candidates: Reciprocal Rank Fusion over the legs' ranked lists, then
the soft preferences read from the question, each part named in the hit's ``explain``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from palimpsest.domain.ranking import cues
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.recall import time_boosts as recall_time
from palimpsest.resolvers.recall.hits import BoostPart, Explain, Hit, Ident, LegPart


@dataclass(frozen=True, slots=True)
class RankedList:
    """One ranked list of one leg, kind and scope."""

    leg: str
    source: pure.Source
    ref: ScopeRef
    ranked: legs.Ranked


@dataclass(frozen=True, slots=True)
class Weights:
    """RRF's constant and each leg's weight, as the request has them."""

    rrf_k: int
    vector: float
    fulltext: float


def fuse(
    lists: list[RankedList],
    found: dict[Ident, Hit],
    pool: int,
    weights: Weights,
    absent_at_depth: bool,
    form: str | None,
) -> list[Hit]:
    """RRF over ranked lists, one per (leg, kind, scope): raw scores from different indexes
    or scopes are never compared, only ranks within one list. The two legs over one kind and
    scope are a group: a row one of them missed ranks just past its pool there (lever
    ``absent_at_depth``)."""
    named: dict[str, list[str]] = {}
    weight: dict[str, float] = {}
    groups: dict[str, str] = {}
    values: dict[tuple[str, str], float] = {}
    passages: dict[tuple[str, str], legs.Passage] = {}
    for lst in lists:
        group = f"{lst.source.value}\x1f{lst.ref.scope.value}"
        name = f"{lst.leg}\x1f{group}"
        idents = [(lst.source.value, lst.ref.scope.value, i) for i in lst.ranked.ids]
        named[name] = [_key(i) for i in idents if i in found]
        weight[name] = weights.vector if lst.leg == "vector" else weights.fulltext
        groups[name] = group
        for ident in idents:
            values[(lst.leg, _key(ident))] = lst.ranked.scores[ident[2]]
            if ident[2] in lst.ranked.passages:
                passages[(lst.leg, _key(ident))] = lst.ranked.passages[ident[2]]
    by_key = {_key(i): h for i, h in found.items()}
    k = weights.rrf_k
    depth = pool if absent_at_depth else None
    out: list[Hit] = []
    for f in pure.rrf(named, k=k, weights=weight, depth=depth, groups=groups):
        hit = by_key[f.id]
        parts: list[LegPart] = []
        for name, rank in f.ranks.items():
            leg = name.split("\x1f", 1)[0]
            value = values[(leg, f.id)]
            w = weight[name]
            matched = passages.get((leg, f.id))
            parts.append(LegPart(leg, rank, w / (k + rank), value, weight=w, passage=matched))
            if leg == "vector":
                hit = replace(hit, vector_rank=rank, cosine=value)
            else:
                hit = replace(hit, fulltext_rank=rank, fulltext_score=value)
        for name in f.beyond:
            leg, rank = name.split("\x1f", 1)[0], pool + 1
            w = weight[name]
            parts.append(LegPart(leg, rank, w / (k + rank), None, True, w))
        out.append(replace(hit, score=f.score, explain=Explain(parts, [], f.score, form=form)))
    return out


def boost(hits: Sequence[Hit], q: cues.QuestionCues, lv: pure.Levers) -> list[Hit]:
    """Soft preferences from the question (levers 3 and 5): multiply, never filter. The hits
    boosted, in the same order."""
    speaker = q.speakers[0] if len(q.speakers) == 1 else None
    return [_boosted(hit, q, lv, speaker) for hit in hits]


def _boosted(hit: Hit, q: cues.QuestionCues, lv: pure.Levers, speaker: str | None) -> Hit:
    boosts: list[BoostPart] = []
    if lv.date_boost > 1.0 and q.date_match(hit.observed_at):
        boosts.append(BoostPart("observedDate", lv.date_boost))
    if lv.when_boost > 1.0 and q.when and hit.has_time:
        boosts.append(BoostPart("whenQuestion", lv.when_boost))
    if lv.year_boost > 1.0 and q.year_match(hit.years):
        boosts.append(BoostPart("yearRange", lv.year_boost))
    if lv.speaker_boost > 1.0 and speaker is not None and hit.speaker == speaker:
        boosts.append(BoostPart("speaker", lv.speaker_boost))
    boosts += recall_time.boosts(hit.time_ranges, q, lv)
    score = hit.score
    for b in boosts:
        score *= b.factor
    explain = hit.explain
    if explain is not None:
        explain = replace(explain, boosts=[*explain.boosts, *boosts])
        if hit.time_ranges and (
            lv.time_boost > 1.0 or lv.time_when_boost > 1.0 or lv.time_span_boost > 1.0
        ):
            explain = replace(explain, time_ranges=hit.time_ranges)
    return replace(hit, score=score, explain=explain)


def _key(ident: Ident) -> str:
    return "\x1f".join(ident)
