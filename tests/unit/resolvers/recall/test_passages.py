"""The vector leg over chunks with passages (``legs.passage_leg``, ``legs.best_of``): a chunk
scores the best of its own vector and its passages', once; the passage that scored it is
named; passages of an earlier text and of dead chunks are passed over; the index is asked
first and the scope scanned when it read short."""

from __future__ import annotations

import asyncio
from typing import Any

from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.recall import legs
from tests.unit.principals import principal


def ranked(scores: dict[str, float], dropped: set[str] | None = None) -> legs.Ranked:
    ids = sorted(scores, key=lambda i: (-scores[i], i))
    cues = {i: legs.Cues.of(None) for i in ids}
    return legs.Ranked(ids, scores, dropped or set(), cues, {i: {"id": i} for i in ids})


def test_a_chunk_scores_the_best_of_its_head_and_its_passages() -> None:
    head = ranked({"a": 0.5, "b": 0.4, "c": 0.3})
    by_passage = ranked({"c": 0.9, "a": 0.45, "d": 0.35})
    by_passage = legs.Ranked(
        by_passage.ids,
        by_passage.scores,
        set(),
        by_passage.cues,
        by_passage.rows,
        {
            "c": legs.Passage(3, 2400, 3400),
            "a": legs.Passage(1, 800, 1800),
            "d": legs.Passage(1, 9, 99),
        },
    )
    out = legs.best_of(head, by_passage, 3)
    assert out.ids == ["c", "a", "b"]  # each chunk once, d cut at the pool
    assert out.scores == {"c": 0.9, "a": 0.5, "b": 0.4}
    assert out.passages == {"c": legs.Passage(3, 2400, 3400)}  # a's head beat its passage
    assert set(out.rows) == {"a", "b", "c"}


def test_a_chunk_the_head_leg_dropped_stays_dropped() -> None:
    head = ranked({"a": 0.5}, dropped={"x"})
    by_passage = legs.Ranked(["x"], {"x": 0.99}, set(), {}, {}, {"x": legs.Passage(1, 0, 5)})
    out = legs.best_of(head, by_passage, 5)
    assert out.ids == ["a"]
    assert "x" in out.dropped


class Passages:
    """A scope's passages as the statements answer them: best first, per passage its chunk,
    whether it is of the chunk's current text, and whether the chunk is live."""

    def __init__(self, rows: list[tuple[str, float, bool, bool, int]], ann_reads: int) -> None:
        self.rows, self.ann_reads = rows, ann_reads
        self.asked: list[str] = []

    async def run(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        self.asked.append(statement.name)
        read = min(self.ann_reads, params["k"]) if statement.name == "VECTOR_PASSAGES" else None
        rows = self.rows[: params["k"] if read is None else read]
        return [
            {
                "ids": [r[0] for r in rows],
                "scores": [r[1] for r in rows],
                "current": [r[2] for r in rows],
                "live": [r[2] and r[3] for r in rows],
                "passages": [[r[4], r[4] * 800, r[4] * 800 + 1000] for r in rows],
                "cues": [[None, None, False, None, False] for _ in rows],
                "rows": [[{"id": r[0]}] for r in rows],
            }
        ]


def leg(scope: Passages, pool: int) -> legs.Ranked:
    tx = ScopedTx(scope.run, resolve_scope(principal(), Scope.USER))
    return asyncio.run(legs.passage_leg(tx, [0.1, 0.2], pool, {}, ann_floor=4))


def test_each_chunk_keeps_its_best_current_passage_and_dead_chunks_drop() -> None:
    scope = Passages(
        [
            ("a", 0.95, False, True, 4),  # a passage of a's earlier text: passed over
            ("a", 0.90, True, True, 2),
            ("b", 0.85, True, False, 1),  # b is not live (a known_at before it, say)
            ("a", 0.80, True, True, 1),
            ("c", 0.70, True, True, 5),
            ("d", 0.60, True, True, 1),
        ],
        ann_reads=100,
    )
    out = leg(scope, 2)  # the index is asked for 8 passages and reads 6: the scope is scanned
    assert scope.asked == ["VECTOR_PASSAGES", "EXACT_PASSAGES"]
    assert out.ids == ["a", "c"]
    assert out.scores == {"a": 2 * 0.90 - 1, "c": 2 * 0.70 - 1}  # cosine from (1 + cos) / 2
    assert out.passages == {"a": legs.Passage(2, 1600, 2600), "c": legs.Passage(5, 4000, 5000)}
    assert out.dropped == {"b"}


def test_a_full_index_read_is_kept() -> None:
    rows = [(f"c{i}", 0.9 - i / 100, True, True, 1) for i in range(10)]
    scope = Passages(rows, ann_reads=100)
    out = leg(scope, 1)  # asked for 4 (the floor): the index answered 4
    assert scope.asked == ["VECTOR_PASSAGES"]
    assert out.ids == ["c0"]


def test_a_short_index_read_falls_back_to_the_exact_scan() -> None:
    rows = [(f"c{i}", 0.9 - i / 100, True, True, 1) for i in range(10)]
    scope = Passages(rows, ann_reads=3)
    out = leg(scope, 2)
    assert scope.asked == ["VECTOR_PASSAGES", "EXACT_PASSAGES"]
    assert out.ids == ["c0", "c1"]
