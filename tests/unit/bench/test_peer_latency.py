"""``bench peer-latency``'s pure parts: the scope it loads, the peer's names, the scoring."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest_bench import peer_latency as pl
from palimpsest_bench.recall_data import Query

DATA = Path(__file__).resolve().parents[4] / "shared" / "eval" / "dev" / "locomo"


def test_synthetic_scope_has_the_turns_asked_in_sessions() -> None:
    ds = pl.synthetic(95, 7)
    turns = pl.turns_of(ds)
    assert len(turns) == 95
    assert len({t.unit for t in turns}) == 95
    assert [len(d.units) for d in ds.docs] == [40, 40, 15]
    assert all(t.text.startswith(("Avery: ", "Jordan: ")) for t in turns)
    assert len(ds.queries) == 7
    assert pl.synthetic(95, 7) == ds  # deterministic: runs compare


def test_each_run_has_labels_and_indexes_of_its_own() -> None:
    a, b = pl.Peer.new(), pl.Peer.new()
    assert a.label != b.label
    assert a.vector_index != b.vector_index
    for peer in (a, b):
        assert peer.label.startswith("PalimpsestBenchPeer_")
        assert peer.label.replace("_", "").isalnum()
        assert peer.fulltext_index.startswith("palimpsest_bench_peer_fulltext_")


def test_the_peer_query_has_no_lucene_syntax_left() -> None:
    assert pl._lucene_safe("When did Tim go? (to: Paris)") == (
        "When did Tim go\\? \\(to\\: Paris\\)"
    )


def test_hit_rate_counts_any_evidence_in_the_top_ten() -> None:
    queries = [
        Query("a", "o", "x", frozenset({"D1:1"})),
        Query("b", "o", "y", frozenset({"D1:2"})),
        Query("c", "o", "z", frozenset()),  # not judged
    ]
    ranked = [["D9:9"] * 9 + ["D1:1"], ["D9:9"] * 10 + ["D1:2"], []]
    assert pl.hit_rate(ranked, queries) == 0.5
    assert pl.hit_rate([[]], [queries[2]]) is None


@pytest.mark.skipif(not DATA.exists(), reason="the shared LoCoMo dev set is not here")
def test_the_default_conversation_is_the_680_turn_one() -> None:
    ds = pl.conversation(DATA)
    assert len(pl.turns_of(ds)) == 680
    assert {d.owner for d in ds.docs} == {"conv-43"}
    assert ds.queries
    assert all(q.category in {"1", "2", "3", "4"} for q in ds.queries)
