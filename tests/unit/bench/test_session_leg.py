"""The session-level leg prototype (issue 28, item 2b): sessions' vectors and terms from a
hand-made scope's chunks, their ranks for a question, and the chunk's RRF gain."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope
from palimpsest.resolvers.recall.hits import Hit
from palimpsest_bench import session_leg as sl

K = 60


def row(chunk: str, doc: str, vec: list[float], text: str) -> dict[str, Any]:
    return {"id": chunk, "document": doc, "embedding": vec, "text": text}


# Session A talks about the camping trip over two turns, B about painting, C about both a
# little. The vectors are hand-made: A points along x, B along y, C between.
SCOPE_ROWS = [
    row("a1", "A", [1.0, 0.0], "Mel: We went camping at the lake"),
    row("a2", "A", [0.8, 0.2], "Caroline: Camping sounds lovely, was the lake cold?"),
    row("b1", "B", [0.0, 1.0], "Mel: I painted a sunset last week"),
    row("c1", "C", [0.6, 0.6], "Caroline: painting and camping both relax me"),
]


def hit(i: str, doc: str, score: float) -> Hit:
    return Hit(pure.Source.DOCUMENTS, Scope.USER, i, "", score=score, document_id=doc)


def test_a_session_vector_is_the_unit_mean_of_its_chunks_vectors() -> None:
    s = sl.sessions_of(SCOPE_ROWS)
    assert s.ids == ("A", "B", "C")
    ax, ay = s.vectors[0]
    assert ax / ay == pytest.approx(1.8 / 0.2)
    assert ax * ax + ay * ay == pytest.approx(1.0)
    assert s.speakers == frozenset({"mel", "caroline"})


def test_session_terms_use_the_scopes_own_session_statistics() -> None:
    s = sl.sessions_of(SCOPE_ROWS)
    assert s.stats.rows == 3  # sessions, not chunks
    assert s.stats.df["camp"] == 2  # A and C hold it
    assert s.stats.df["lake"] == 1
    assert s.stats.length == sum(b.length for b in s.bags)


def test_the_session_legs_rank_the_matching_session_first() -> None:
    s = sl.sessions_of(SCOPE_ROWS)
    ranks = sl.session_ranks(s, [1.0, 0.05], ["camp", "lake"], 1.2, 0.75)
    assert ranks["vector"] == {"A": 1, "C": 2, "B": 3}
    assert ranks["fulltext"] == {"A": 1, "C": 2}  # B holds no query term: not ranked


def test_a_chunk_gains_its_sessions_rrf_terms_and_the_order_changes() -> None:
    s = sl.sessions_of(SCOPE_ROWS)
    ranks = sl.session_ranks(s, [1.0, 0.05], ["camp", "lake"], 1.2, 0.75)
    # b1 leads by a little on the chunk legs; a2's session matches best on both session legs.
    hits = [hit("b1", "B", 0.0330), hit("a2", "A", 0.0320)]
    out = sl.rerank(hits, ranks, ("vector", "fulltext"), 1.0, K)
    assert [h.id for h in out] == ["a2", "b1"]
    assert [h.score for h in hits] == [0.0330, 0.0320]  # the hits themselves are unchanged
    # Without the session legs the order stays.
    assert [h.id for h in sl.rerank(hits, ranks, (), 1.0, K)] == ["b1", "a2"]


def test_depth_bounds_which_sessions_gain() -> None:
    ranks = {"vector": {"A": 1, "B": 2}}
    hits = [hit("a1", "A", 0.0300), hit("b1", "B", 0.0301)]
    assert [h.id for h in sl.rerank(hits, ranks, ("vector",), 1.0, K)] == ["a1", "b1"]
    # B's gain is 1/62, A's 1/61; with depth 1 only A gains.
    deep = sl.rerank(
        [hit("b1", "B", 0.0301), hit("a1", "A", 0.0300)], ranks, ("vector",), 1.0, K, 1
    )
    assert [h.id for h in deep] == ["a1", "b1"]
    none = sl.rerank(
        [hit("b1", "B", 0.0301), hit("a1", "A", 0.0299)], {"vector": {"C": 1}}, ("vector",), 1.0, K
    )
    assert [h.id for h in none] == ["b1", "a1"]


def test_the_fused_rank_combines_both_session_legs() -> None:
    s = sl.sessions_of(SCOPE_ROWS)
    # The vector ranks B first and C second; only C holds the term: fused, C comes first.
    ranks = sl.session_ranks(s, [0.0, 1.0], ["relax"], 1.2, 0.75)
    assert ranks["vector"] == {"B": 1, "C": 2, "A": 3}
    assert ranks["fulltext"] == {"C": 1}
    assert ranks["fused"] == {"C": 1, "B": 2, "A": 3}


def test_the_candidates_are_the_products_pool_whole() -> None:
    # LoCoMo's top 10 is fused from pools of 20 per leg: up to 40 candidates, all reordered.
    assert sl.sizes("locomo") == (10, 20, 40)
    # SciFact's top 100: pools of 200, and the resolver serves 200 at most.
    assert sl.sizes("scifact") == (100, 200, 200)
    assert sl.sizes("timeqa", 3) == (10, 30, 60)
