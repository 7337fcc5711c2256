"""The procedure engine's reads, without Neo4j: what a call is given, what it refuses before
any call, and when an answer cut at ``top`` rows is whole enough
(``recall_text.Procedure``, ``recall_text.complete``; the engine itself on the real Neo4j in
``tests/integration/test_text_procedure.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.cypher import recall_procedure as qp
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.errors import InvalidArgument
from palimpsest.resolvers.recall import text

STATS = KindStats(10, 50, {"oak": 3, "pine": 5, "yew": 0})


def _procedure(stats: KindStats = STATS, pool: int = 3) -> text.Procedure:
    scorer = fulltext.Scorer.of(["pine", "oak", "yew", "absent"], stats, 1.2, 0.75)
    return text.Procedure(qp.PROC_TERMS_MEMORY, "memory", scorer, pool)


def test_a_call_gets_the_scorers_terms_and_weights_in_its_order() -> None:
    params = _procedure().params([["oak"], ["pine"]], [], 8)
    assert params["terms"] == ["oak", "pine"]  # df > 0 only, sorted: the scorer's order
    assert params["weights"] == [fulltext.idf(10, 3), fulltext.idf(10, 5)]
    assert (params["k1"], params["b"], params["avg_length"]) == (1.2, 0.75, 5.0)
    assert params["sets"] == [["oak"], ["pine"]]
    assert (params["unless"], params["top"], params["kind"]) == ([], 8, "memory")


@pytest.mark.parametrize(
    ("sets", "unless"),
    [
        ([], []),  # nothing to match
        ([[]], []),  # an empty set
        ([["oak pine"]], []),  # not one analyzed word
        ([['oak") OR scope_key:(*']], []),  # Lucene syntax
        ([["oak"]], ["under_score"]),
    ],
)
def test_input_the_procedure_cannot_use_is_refused_before_the_call(
    sets: list[list[str]], unless: list[str]
) -> None:
    with pytest.raises(InvalidArgument):
        _procedure().params(sets, unless, 8)


def test_a_scope_without_length_is_refused_before_the_call() -> None:
    with pytest.raises(InvalidArgument):
        _procedure(KindStats(10, 0, {"oak": 3})).params([["oak"]], [], 8)


def _found(scores: list[float], live: list[bool]) -> dict[str, Any]:
    return {"ids": [f"r{i}" for i in range(len(scores))], "scores": scores, "live": live}


def test_an_answer_shorter_than_asked_is_every_row_matched() -> None:
    assert text.complete(_found([3.0, 2.0], [False, False]), 3, 4)


def test_a_cut_answer_is_whole_when_the_pools_floor_is_above_its_last_row() -> None:
    assert text.complete(_found([5.0, 4.0, 3.0, 2.0], [True, True, True, True]), 3, 4)
    assert text.complete(_found([5.0, 4.0, 3.0, 2.0], [True, False, True, True]), 2, 4)


def test_a_cut_answer_is_not_whole_when_a_row_left_out_could_tie_the_floor() -> None:
    # The pool's floor is the last row's score: a row left out may score as much and, its id
    # smaller, belong in the pool, or, not live, among the rows dropped above the floor.
    assert not text.complete(_found([5.0, 4.0, 3.0, 3.0], [True, True, True, True]), 3, 4)
    assert not text.complete(_found([5.0, 4.0, 3.0, 2.0], [True, True, False, True]), 3, 4)
    assert not text.complete(_found([5.0, 4.0, 3.0, 2.0], [True, False, False, False]), 2, 4)
