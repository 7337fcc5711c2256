"""Recall's ranking of candidates (resolvers/recall/fusion.py): RRF over the legs' lists of one
kind and scope, the row a leg missed ranked just past its pool, and the question's soft
preferences multiplying the fused score (hand-made lists and candidates)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from palimpsest.domain.ranking import cues
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope
from palimpsest.resolvers.recall import fusion, legs
from palimpsest.resolvers.recall import hits as hits_of
from palimpsest.resolvers.recall.hits import Hit, Ident
from tests.unit.principals import scope_ref

K = 60
POOL = 3
USER = scope_ref("acme", Scope.USER, "alice")
NOTES, DOCS = pure.Source.NOTES, pure.Source.DOCUMENTS


def listed(leg: str, source: pure.Source, scored: list[tuple[str, float]]) -> fusion.RankedList:
    ids = [i for i, _ in scored]
    return fusion.RankedList(leg, source, USER, legs.Ranked(ids, dict(scored), set()))


def candidates(lists: list[fusion.RankedList]) -> dict[Ident, Hit]:
    found: dict[Ident, Hit] = {}
    for lst in lists:
        for i in lst.ranked.ids:
            cue = legs.Cues.of(None)
            found[(lst.source.value, USER.scope.value, i)] = hits_of.candidate(
                lst.source, USER.scope, i, cue
            )
    return found


def fused(lists: list[fusion.RankedList], vector: float = 1.0, fulltext: float = 1.0) -> list[Hit]:
    weights = fusion.Weights(K, vector, fulltext)
    return fusion.fuse(lists, candidates(lists), POOL, weights, True, None)


def test_a_row_both_legs_rank_sums_both_terms_and_shows_each_in_explain() -> None:
    lists = [
        listed("vector", NOTES, [("a", 0.9), ("b", 0.8)]),
        listed("fulltext", NOTES, [("b", 7.5), ("a", 2.0)]),
    ]
    a, b = fused(lists)
    assert (a.id, b.id) == ("a", "b")  # equal sums: first seen (the vector list) first
    assert a.score == pytest.approx(1 / (K + 1) + 1 / (K + 2))
    assert (a.vector_rank, a.cosine, a.fulltext_rank, a.fulltext_score) == (1, 0.9, 2, 2.0)
    assert a.explain is not None
    shown = {(p.leg, p.rank, p.value) for p in a.explain.legs}
    assert shown == {("vector", 1, 0.9), ("fulltext", 2, 2.0)}
    assert a.explain.fused == pytest.approx(a.score)


def test_a_row_one_leg_missed_ranks_just_past_that_legs_pool() -> None:
    lists = [
        listed("vector", NOTES, [("a", 0.9), ("b", 0.8), ("c", 0.7)]),
        listed("fulltext", NOTES, [("c", 3.0)]),
    ]
    by_id = {h.id: h for h in fused(lists)}
    a = by_id["a"]
    assert a.score == pytest.approx(1 / (K + 1) + 1 / (K + POOL + 1))
    assert a.explain is not None
    [missed] = [p for p in a.explain.legs if p.beyond_depth]
    assert (missed.leg, missed.rank, missed.value) == ("fulltext", POOL + 1, None)
    assert a.fulltext_rank is None


def test_lists_of_different_kinds_never_count_as_each_others_misses() -> None:
    lists = [listed("vector", NOTES, [("n", 0.9)]), listed("vector", DOCS, [("c", 0.9)])]
    note, chunk = fused(lists)
    # Neither kind has a full-text list here, and one kind's legs say nothing of the other's
    # rows: each row scores its own list's term alone.
    assert note.score == chunk.score == pytest.approx(1 / (K + 1))
    assert note.explain is not None
    assert not any(p.beyond_depth for p in note.explain.legs)


def test_the_leg_weights_scale_their_terms() -> None:
    lists = [
        listed("vector", NOTES, [("a", 0.9), ("b", 0.8)]),
        listed("fulltext", NOTES, [("b", 7.5), ("a", 2.0)]),
    ]
    top = fused(lists, vector=0.0, fulltext=2.0)[0]
    assert top.id == "b"
    assert top.score == pytest.approx(2 / (K + 1))


def question(text: str, speakers: tuple[str, ...] = ()) -> cues.QuestionCues:
    return cues.read_question(text, speakers, datetime(2024, 6, 1, tzinfo=UTC))


def scored(hit: Hit, score: float) -> Hit:
    return replace(hit, score=score, explain=hits_of.Explain([], [], score))


def test_a_when_question_multiplies_rows_with_a_time_expression_only() -> None:
    timed = scored(Hit(NOTES, Scope.USER, "t", "", has_time=True), 1.0)
    plain = scored(Hit(NOTES, Scope.USER, "p", "", has_time=False), 1.0)
    lv = pure.Levers()
    before = [timed, plain]
    timed, plain = fusion.boost(before, question("When did we move the standup?"), lv)
    assert before[0].score == 1.0  # a new hit: the one given is left as it was
    assert timed.score == pytest.approx(lv.when_boost)
    assert timed.explain is not None
    assert [(b.lever, b.factor) for b in timed.explain.boosts] == [("whenQuestion", lv.when_boost)]
    assert plain.score == 1.0
    assert plain.explain is not None
    assert plain.explain.boosts == []


def test_a_named_speaker_multiplies_that_speakers_rows_and_a_factor_of_one_is_off() -> None:
    # Speakers are kept lowercase (``cues.speaker_of``); the question names one in any case.
    mine = scored(Hit(DOCS, Scope.USER, "m", "", speaker="mira"), 1.0)
    other = scored(Hit(DOCS, Scope.USER, "o", "", speaker="tomas"), 1.0)
    q = question("What did Mira say about the hike?", ("mira", "tomas"))
    mine, other = fusion.boost([mine, other], q, pure.Levers(speaker_boost=1.2))
    assert mine.score == pytest.approx(1.2)
    assert other.score == 1.0
    again = scored(Hit(DOCS, Scope.USER, "m", "", speaker="mira"), 1.0)
    [again] = fusion.boost([again], q, pure.Levers(speaker_boost=1.0))
    assert again.score == 1.0
