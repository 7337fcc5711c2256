"""Entities as context (docs/reference/recall.md, Levers: the entity step): a bounded second
full-text query for questions whose evidence is spread over several turns.

After fusion and the boosts, the best ``SEEDS`` candidates of each scope are read for their
salient names (``salient``: capitalised words and phrases, by deterministic rules; the
scope's speakers, who appear everywhere, are not salient). The question's own full-text terms
plus the terms of at most ``MAX_NAMES`` of those names are then searched again in the same
scope, with the same scope-local BM25 statistics and the same leg as the first full-text
query (``recall_legs.fulltext_leg``: the terms go to Lucene as escaped parameters, never as
syntax). The second list is fused like one more leg: each row it ranks gains
``weight / (k + rank)`` (the same ``k``), shown in ``explain`` as the leg ``entities``; a row
the first legs missed becomes a candidate with that gain alone. Seeds, names and the second
list are per scope, from the scope's own rows, so nothing from another scope reaches a score.
A question whose seeds name nobody new runs no second query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from palimpsest.cypher.driver.executor import Row, Tx
from palimpsest.cypher.extension import Engine
from palimpsest.domain.ranking import cues, fulltext
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.recall.hits import Explain, Hit, Ident, LegPart, candidate

ENTITIES = "entities"  # the leg name in ``explain.legs``
SEEDS = 5  # the best candidates of a scope whose names seed the second query
MAX_NAMES = 6  # the most names added to the question's terms

# A capitalised word (a letter first; "O'Neil", "Wi-Fi", "LGBTQ"), and where a sentence
# starts (the text's start, or after ". ", "! ", "? ", a quote or a bracket).
_WORD = re.compile(r"[A-Z][\w'\u2019&-]*")
_STARTS = re.compile(r"(?:^|[.!?:;]|[\"\u201c(\[])\s*$")
_COMMON = fulltext.STOP_WORDS | fulltext.QUESTION_WORDS


@dataclass(frozen=True, slots=True)
class Step:
    """The second list of one kind and scope, for the final load's carried rows."""

    ref: ScopeRef
    source: pure.Source
    ranked: legs.Ranked


def names_in(text: str) -> tuple[list[str], set[str]]:
    """The capitalised phrases of one text (its ``Speaker:`` prefix left out), and the words
    found capitalised away from a sentence's start. A phrase is a run of capitalised words
    one space apart, less leading common words ("The", "My"); a one-word phrase at a
    sentence's start ("Wow", "Thanks") is kept by ``salient`` only if the word is seen
    capitalised elsewhere too."""
    if cues.speaker_of(text) is not None:
        text = text.split(":", 1)[1]
    phrases: list[str] = []
    inner: set[str] = set()
    run: list[tuple[str, bool]] = []  # (word, at a sentence's start)
    end = -1

    def close() -> None:
        words = list(run)
        while words and words[0][0].lower() in _COMMON:
            words.pop(0)
        if words:
            phrase = " ".join(w for w, _ in words)
            phrases.append(("\x00" if len(words) == 1 and words[0][1] else "") + phrase)
        run.clear()

    for m in _WORD.finditer(text):
        if run and m.start() != end + 1:
            close()
        start = bool(_STARTS.search(text[: m.start()]))
        if not start:
            inner.add(m.group())
        run.append((m.group(), start and not run))
        end = m.end()
    if run:
        close()
    return phrases, inner


def salient(texts: Sequence[str], speakers: Collection[str], limit: int = MAX_NAMES) -> list[str]:
    """The names of ``texts`` (best first: held by more texts, then first seen), less the
    ``speakers`` (lowercase) and names made only of their words; at most ``limit``."""
    found = [names_in(t) for t in texts]
    inner = {w for _, words in found for w in words}
    held: dict[str, int] = {}
    for phrases, _ in found:
        mine: set[str] = set()
        for raw in phrases:
            name = raw.lstrip("\x00")
            if raw.startswith("\x00") and name not in inner:
                continue
            words = {w.lower() for w in name.split()}
            if name.lower() in speakers or words <= set(speakers) | _COMMON:
                continue
            mine.add(name)
            held.setdefault(name, 0)
        for name in mine:
            held[name] += 1
    order = {name: i for i, name in enumerate(held)}
    return sorted(held, key=lambda n: (-held[n], order[n]))[:limit]


def second_terms(question_terms: Sequence[str], names: Sequence[str]) -> list[str]:
    """The second query: the question's terms, then the names' terms (each once); empty when
    the names add no term."""
    extra = [t for t in fulltext.query_terms(" ".join(names), False) if t not in question_terms]
    if not extra:
        return []
    return list(dict.fromkeys([*question_terms, *extra]))[: fulltext.MAX_QUERY_TERMS]


def fuse(hits: Sequence[Hit], step: Step, weight: float, k: int) -> tuple[list[Hit], list[Hit]]:
    """The second list's gains added to the hits of its scope: the hits (in their order,
    those it ranks with their gains) and the new candidates, rows the first legs missed."""
    ref = step.ref
    place = {(h.kind, h.id): i for i, h in enumerate(hits) if h.scope == ref.scope}
    out = list(hits)
    new: list[Hit] = []
    for rank, row_id in enumerate(step.ranked.ids, start=1):
        gain = weight / (k + rank)
        part = LegPart(ENTITIES, rank, gain, step.ranked.scores.get(row_id), weight=weight)
        at = place.get((step.source, row_id))
        if at is None:  # a row the first legs missed: this list's gain is all its score
            cue = step.ranked.cues.get(row_id) or legs.Cues.of(None)
            hit = candidate(step.source, ref.scope, row_id, cue)
            new.append(replace(hit, score=gain, explain=Explain([part], [], gain)))
            continue
        hit = out[at]
        explain = hit.explain
        if explain is not None:
            explain = replace(explain, legs=[*explain.legs, part])
        out[at] = replace(hit, score=hit.score + gain, explain=explain)
    return out, new


async def apply(
    tx: Tx,
    refs: Sequence[ScopeRef],
    hits: list[Hit],
    plan: Plan,
    texts: Mapping[Ident, Row],
) -> tuple[list[Hit], list[Step]]:
    """The second step over the fused, boosted candidates (best first): the candidates with
    the gains, best first again (stable on ties), and the second lists run."""
    if plan.weight <= 0 or not plan.terms:
        return hits, []
    steps: list[Step] = []
    new: list[Hit] = []
    for ref in refs:
        seeds = [h for h in hits if h.scope == ref.scope][:SEEDS]
        seed_texts = [_text(texts, h) for h in seeds]
        names = salient([t for t in seed_texts if t], plan.speakers)
        terms = second_terms(plan.terms, names)
        if not terms:
            continue
        scoped = tx.scoped(ref)
        stats = await legs.read_stats(scoped, plan.sources, terms, False)
        for source in plan.sources:
            kind = stats.of(source)
            if kind.rows == 0:
                continue
            ranked = await legs.fulltext_leg(
                scoped,
                source,
                terms,
                kind,
                plan.pool,
                plan.base,
                plan.k1,
                plan.b,
                engine=plan.engine,
            )
            step = Step(ref, source, ranked)
            steps.append(step)
            hits, more = fuse(hits, step, plan.weight, plan.k)
            new += more
    if new:
        new = plan.admit(new)
    return sorted([*hits, *(h for h in new if plan.keep(h))], key=lambda h: -h.score), steps


@dataclass(frozen=True, slots=True)
class Plan:
    """What the step needs of the request: the question's full-text terms, the scopes'
    speakers (lowercase), the kinds searched, the leg's pool and parameters, the weight and
    ``k`` of the fusion, and the request's own rules for a new candidate (``admit``: the
    time window and the boosts, answering the new candidates placed and boosted; ``keep``:
    whether the window keeps it)."""

    terms: Sequence[str]
    speakers: Collection[str]
    sources: Sequence[pure.Source]
    pool: int
    base: dict[str, Any]
    k1: float
    b: float
    weight: float
    k: int
    admit: Callable[[list[Hit]], list[Hit]]
    keep: Callable[[Hit], bool]
    engine: Engine = "cypher"  # which engine reads the full-text legs (cypher/extension.py)


def plan_of(
    terms: Sequence[str],
    speakers: Collection[str],
    sources: Sequence[pure.Source],
    pool: int,
    base: dict[str, Any],
    lv: pure.Levers,
    k: int,
    window: pure.Window | None,
    boost: Callable[[list[Hit]], list[Hit]],
    engine: Engine = "cypher",
) -> Plan:
    """The step's plan for one request: a new candidate is placed in or out of the time
    window and boosted like the first legs' candidates; a window that requires drops it
    when outside."""

    def admit(new: list[Hit]) -> list[Hit]:
        if window is not None:
            new = [replace(h, in_window=window.contains(h.observed_at)) for h in new]
        return boost(new)

    def keep(hit: Hit) -> bool:
        return window is None or window.missing is not pure.Missing.REQUIRE or bool(hit.in_window)

    return Plan(
        terms, speakers, sources, pool, base, lv.k1, lv.b, lv.entity_weight, k, admit, keep, engine
    )


def _text(texts: Mapping[Ident, Row], hit: Hit) -> str:
    row = texts.get((hit.kind.value, hit.scope.value, hit.id))
    return str(row.get("text") or "") if row is not None else hit.text
