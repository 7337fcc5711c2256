"""The session prior (sessions as context): documents ranked per scope by their candidates'
fused scores, and each chunk's gain ``weight / (k + rank)`` (hand-made candidates)."""

from __future__ import annotations

import pytest

from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope
from palimpsest.resolvers.recall import sessions as rs
from palimpsest.resolvers.recall.hits import Explain, Hit

K = 60


def chunk(i: str, fused: float, scope: Scope = Scope.USER) -> Hit:
    return Hit(pure.Source.DOCUMENTS, scope, i, "", score=fused, explain=Explain([], [], fused))


def test_a_document_with_several_matching_chunks_ranks_above_one_lone_better_chunk() -> None:
    hits = [chunk("lone", 0.030), chunk("a1", 0.020), chunk("a2", 0.015)]
    docs = {("USER", "lone"): "B", ("USER", "a1"): "A", ("USER", "a2"): "A"}
    ranks = rs.document_ranks(hits, docs)
    assert ranks[("USER", "A")][0] == 1
    assert ranks[("USER", "A")][1] == pytest.approx(0.035)
    assert ranks[("USER", "B")][0] == 2
    assert ranks[("USER", "B")][1] == pytest.approx(0.030)


def test_the_prior_adds_one_rrf_term_per_chunk_and_shows_it_in_explain() -> None:
    hits = [chunk("lone", 0.030), chunk("a1", 0.020), chunk("a2", 0.015)]
    docs = {("USER", "lone"): "B", ("USER", "a1"): "A", ("USER", "a2"): "A"}
    lone, a1, a2 = rs.add_prior(hits, docs, 1.0, K)
    assert lone.score == pytest.approx(0.030 + 1 / (K + 2))
    assert a1.score == pytest.approx(0.020 + 1 / (K + 1))
    assert a2.score == pytest.approx(0.015 + 1 / (K + 1))
    assert a1.explain is not None
    [part] = a1.explain.legs
    assert (part.leg, part.rank, part.weight) == (rs.SESSION, 1, 1.0)
    assert part.value == pytest.approx(0.035)
    assert part.contribution == pytest.approx(1 / (K + 1))
    assert a1.explain.fused == 0.020  # the fused sum before the prior is kept


def test_rows_of_no_document_and_other_kinds_gain_nothing() -> None:
    note = Hit(pure.Source.NOTES, Scope.USER, "n", "", score=0.05)
    hits = rs.add_prior([note, chunk("a1", 0.02)], {("USER", "a1"): "A"}, 1.0, K)
    assert hits[0] is note
    assert hits[1].score == pytest.approx(0.02 + 1 / (K + 1))


def test_documents_are_ranked_within_their_own_scope_only() -> None:
    # The agent scope's document has far more support; the user scope's documents still
    # rank from 1 among themselves, as they would with the agent scope absent.
    hits = [
        chunk("g1", 0.9, Scope.AGENT),
        chunk("g2", 0.9, Scope.AGENT),
        chunk("u1", 0.02),
        chunk("u2", 0.01),
    ]
    docs = {
        ("AGENT", "g1"): "G",
        ("AGENT", "g2"): "G",
        ("USER", "u1"): "U1",
        ("USER", "u2"): "U2",
    }
    ranks = rs.document_ranks(hits, docs)
    alone = rs.document_ranks(hits[2:], docs)
    assert ranks[("USER", "U1")] == alone[("USER", "U1")]
    assert ranks[("USER", "U1")][0] == 1
    assert ranks[("USER", "U2")][0] == 2
    assert ranks[("AGENT", "G")][0] == 1
