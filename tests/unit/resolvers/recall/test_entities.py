"""The entity step (entities as context), its pure parts: the salient names of the best
candidates' texts, the second query's terms, and the second list's fusion (hand-made texts
and candidates)."""

from __future__ import annotations

import pytest

from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.recall import entities as re_
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.recall.hits import Explain, Hit
from tests.unit.principals import principal

K = 60
TURNS = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's cool, Caroline! I read Becoming Nicole by Amy Ellis Nutt.",
    "Caroline: Thanks! My friend from Sweden gave me that book. The Sweden trip was great.",
    "Melanie: Wow. We went camping in Yosemite with Oscar, and Oscar loved it.",
]


def test_names_are_capitalised_phrases_less_the_speaker_prefix() -> None:
    phrases, inner = re_.names_in(TURNS[1])
    names = [p.lstrip("\x00") for p in phrases]
    assert "Melanie" not in names  # the speaker prefix is not read
    assert names == ["Wow", "Caroline", "Becoming Nicole", "Amy Ellis Nutt"]
    assert phrases[0].startswith("\x00")  # "Wow" starts a sentence
    assert "Wow" not in inner
    assert "Nicole" in inner


def test_salient_names_drop_speakers_common_words_and_sentence_openers() -> None:
    names = re_.salient(TURNS, {"caroline", "melanie"})
    assert "Caroline" not in names
    assert "Melanie" not in names
    assert "Wow" not in names
    assert "Thanks" not in names
    assert "I" not in names
    assert "My" not in names
    assert names == ["LGBTQ", "Becoming Nicole", "Amy Ellis Nutt", "Sweden", "Yosemite", "Oscar"]


def test_a_name_held_by_more_texts_ranks_first_and_the_limit_holds() -> None:
    texts = ["Ann met Oscar in Lyon.", "Then Oscar went home.", "Bo saw Oscar in Lyon."]
    assert re_.salient(texts, set(), limit=2) == ["Oscar", "Lyon"]
    # A sentence opener counts when the word is seen capitalised elsewhere too.
    assert re_.salient(["Lyon is far.", "We flew to Lyon."], set()) == ["Lyon"]
    assert re_.salient(["Lyon is far."], set()) == []


def test_second_terms_are_the_question_s_then_the_names_and_empty_without_new_ones() -> None:
    assert re_.second_terms(["brother", "work"], ["Oscar", "New York"]) == [
        "brother",
        "work",
        "oscar",
        "new",
        "york",
    ]
    assert re_.second_terms(["oscar", "work"], ["Oscar"]) == []
    assert re_.second_terms(["work"], []) == []


def hit(i: str, score: float, scope: Scope = Scope.USER) -> Hit:
    return Hit(pure.Source.DOCUMENTS, scope, i, "", score=score, explain=Explain([], [], score))


def test_the_second_list_adds_one_rrf_term_and_a_missed_row_becomes_a_candidate() -> None:
    ref = resolve_scope(principal(), Scope.USER)
    hits = [hit("a", 0.03), hit("b", 0.02)]
    ranked = legs.Ranked(["c", "b"], {"c": 4.0, "b": 2.0}, set())
    (a, b), new = re_.fuse(hits, re_.Step(ref, pure.Source.DOCUMENTS, ranked), 0.5, K)
    assert hits[1].score == 0.02  # a new hit: the one given is left as it was
    assert a.score == 0.03  # not in the second list: unchanged
    assert b.score == pytest.approx(0.02 + 0.5 / (K + 2))
    assert b.explain is not None
    [part] = b.explain.legs
    assert (part.leg, part.rank, part.value, part.weight) == (re_.ENTITIES, 2, 2.0, 0.5)
    [c] = new
    assert (c.id, c.scope) == ("c", Scope.USER)
    assert c.score == pytest.approx(0.5 / (K + 1))
    assert c.explain is not None
    assert c.explain.legs[0].leg == re_.ENTITIES


def test_the_second_list_of_one_scope_touches_no_other_scope_s_hit() -> None:
    ref = resolve_scope(principal(), Scope.USER)
    other = hit("b", 0.02, Scope.AGENT)  # the same id, another scope
    ranked = legs.Ranked(["b"], {"b": 1.0}, set())
    [same], new = re_.fuse([other], re_.Step(ref, pure.Source.DOCUMENTS, ranked), 1.0, K)
    assert same is other
    assert [(h.id, h.scope) for h in new] == [("b", Scope.USER)]
