"""The one-statement search's resolver side, without Neo4j (``resolvers/recall/one.py``):
the speakers' hints, how many rows a whole-scope read asks for, and when the statement's
full-text rows settle a leg (the statement itself on the real Neo4j in
``tests/integration/test_text_procedure.py`` and ``test_search_round_trips.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.domain.ranking.fusion import Source
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope
from palimpsest.resolvers.recall import one
from tests.unit.principals import scope_ref

STATS = KindStats(4, 16, {"oak": 3, "pine": 2})
TERMS = ["oak", "pine"]


def _found(
    rows: list[tuple[str, str, list[int], int, bool]], matched: int | None
) -> dict[str, Any]:
    """A statement's full-text answer for ``rows`` (id, ft, tf, length, live), procedure
    scores as Python's (the same weights)."""
    scorer = fulltext.Scorer.of(TERMS, STATS, 1.2, 0.75)
    return {
        "ids": [r[0] for r in rows],
        "scores": [scorer.score(r[1], r[2], r[3]) for r in rows],
        "live": [r[4] for r in rows],
        "lens": [r[3] for r in rows],
        "ft": [r[1] for r in rows],
        "tf": [r[2] for r in rows],
        "cues": [[None, None, False, None, False] for _ in rows],
        "matched": matched,
    }


ROWS = [
    ("a", "oak pine", [2, 1], 3, True),
    ("b", "oak pine", [1, 1], 4, True),
    ("c", "oak", [1], 4, False),
    ("d", "pine", [1], 5, True),
]


def test_hints_keep_the_last_scopes_searched() -> None:
    hints = one.Hints(2)
    hints.put("s1", one.Hint(frozenset({"Ann"}), 3))
    hints.put("s2", one.Hint(frozenset(), 5))
    assert hints.get("s1") == one.Hint(frozenset({"Ann"}), 3)  # now the most recent
    hints.put("s3", one.Hint(frozenset(), 7))
    assert hints.get("s2") is None
    assert hints.get("s1") is not None
    assert hints.get("s3") is not None


def test_a_whole_scope_read_asks_for_the_rows_last_seen_or_the_most_it_serves() -> None:
    assert one.whole_rows(None, 20, 2000) == 2000 + 250 + 16
    assert one.whole_rows(one.Hint(frozenset(), 680), 20, 2000) == 680 + 85 + 16
    assert one.whole_rows(one.Hint(frozenset(), 5), 40, 2000) == 40
    assert one.whole_rows(one.Hint(frozenset(), 10**6), 20, 2000) == 2000 + 250 + 16


def test_every_matched_row_back_settles_the_leg() -> None:
    ranked = one.text_leg(_found(ROWS, 4), TERMS, STATS, 2, 1.2, 0.75)
    assert ranked is not None
    assert ranked.ids == ["a", "b"]
    scorer = fulltext.Scorer.of(TERMS, STATS, 1.2, 0.75)
    assert ranked.scores == {"a": scorer.score("oak pine", [2, 1], 3), "b": ranked.scores["b"]}
    assert ranked.dropped == set()  # "c" scores below the pool's floor


def test_a_cut_answer_settles_the_leg_only_when_no_row_left_out_can_reach_the_pool() -> None:
    # Three of five matched rows back: the pool of 2 ("a", "b") is above the last row's
    # score, so the two left out (at most that) cannot enter it.
    assert one.text_leg(_found(ROWS[:3], 5), TERMS, STATS, 2, 1.2, 0.75) is not None
    # A pool of 3 needs a third live row: "c" is not live, so a row left out may be it.
    assert one.text_leg(_found(ROWS[:3], 5), TERMS, STATS, 3, 1.2, 0.75) is None
    # The pool's last score equal to the last row's: a row left out could tie it.
    tied = _found([ROWS[0], ("e", *ROWS[0][1:])], 3)
    assert one.text_leg(tied, TERMS, STATS, 2, 1.2, 0.75) is None


def test_no_match_settles_the_leg_empty() -> None:
    ranked = one.text_leg(_found([], None), TERMS, STATS, 2, 1.2, 0.75)
    assert ranked is not None
    assert ranked.ids == []


def test_terms_the_procedure_cannot_take_are_refused_before_any_call() -> None:
    sent: list[str] = []

    async def run(statement: Statement, params: dict[str, Any]) -> list[Row]:
        sent.append(statement.name)
        return []

    tx = ScopedTx(run, scope_ref("t", Scope.USER, "alice"))
    read = one.read(tx, [Source.NOTES], ["oak pine"], False, {}, None, 5, 1.2, 0.75, 2000, 100)
    with pytest.raises(InvalidArgument):
        asyncio.run(read)
    assert sent == []
