"""Pure helpers of the recall benchmarks; no timings are measured or asserted here."""

from __future__ import annotations

import pytest

from palimpsest.domain.documents import markdown
from palimpsest_bench import recall_bench as b
from palimpsest_bench import recall_load as d


def test_percentile_interpolates_between_ranks() -> None:
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert b.percentile(values, 0) == 1.0
    assert b.percentile(values, 50) == 3.0
    assert b.percentile(values, 100) == 5.0
    assert b.percentile(values, 95) == pytest.approx(4.8)
    assert b.percentile([1.0, 2.0], 50) == pytest.approx(1.5)
    assert b.percentile([7.0], 99) == 7.0


def test_percentile_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="no values"):
        b.percentile([], 50)
    with pytest.raises(ValueError, match="0-100"):
        b.percentile([1.0], 101)


def test_latency_stats_names_and_prefix() -> None:
    stats = b.latency_stats([1.0, 2.0, 3.0, 4.0], "raw_")
    assert set(stats) == {"raw_p50", "raw_p95", "raw_p99", "raw_mean"}
    assert stats["raw_p50"] == 2.5
    assert stats["raw_mean"] == 2.5


def test_overlap_counts_the_exact_top_k_found() -> None:
    exact = [f"e{i}" for i in range(20)]
    assert b.overlap(exact[:10], exact) == 1.0
    assert b.overlap([*exact[:9], "x"], exact) == 0.9
    # Only the top k of each list count: a true hit found at rank 11 is a miss.
    assert b.overlap(["x", *exact[:10]], exact) == 0.9
    assert b.overlap(list(reversed(exact[:10])), exact) == 1.0


def test_overlap_small_and_empty_scopes() -> None:
    assert b.overlap(["a"], ["a"]) == 1.0  # a one-row scope has one true hit
    assert b.overlap([], ["a"]) == 0.0
    assert b.overlap([], []) == 1.0
    assert b.overlap(["a"], []) == 0.0
    assert b.overlap(["a", "b"], ["b", "b", "a"], k=2) == 1.0  # duplicates count once


@pytest.mark.parametrize("n", [1, 100, 10_000, 100_000])
def test_latency_plan_adds_up_and_is_stable(n: int) -> None:
    plan = d.latency_plan(n)
    assert sum(p.chunks for p in plan) == n
    assert plan == d.latency_plan(n)
    assert [p.big for p in plan].count(True) == 1
    assert len({p.key for p in plan}) == len(plan)
    assert all(p.tenant.startswith(f"bench-recall-{n}-") for p in plan)
    if n >= 10_000:
        assert plan[0].chunks == n // 5
        assert len(plan) > 50
        assert all(d.SMALL_MIN <= p.chunks <= d.SMALL_MAX for p in plan[1:-1])


def test_filtered_plan_has_exact_shares() -> None:
    assert [p.chunks for p in d.filtered_plan(100_000)] == [10, 100, 1000, 10_000, 100_000]
    assert [p.chunks for p in d.filtered_plan(10_000)] == [1, 10, 100, 1000, 10_000]
    assert [p.chunks for p in d.filtered_plan(100)] == [1, 1, 1, 10, 100]
    plan = d.filtered_plan(10_000)
    assert len({p.key for p in plan}) == len(plan)
    assert {p.tenant for p in plan} == {"bench-filtered-10000"}
    assert [p.big for p in plan] == [False, False, False, False, True]
    assert {p.tenant for p in d.filtered_plan(10_000, synthetic=True)} == {
        "bench-filtered-synth-10000"
    }


@pytest.mark.parametrize("chunks", [1, 2, 3, 7, 25])
def test_document_parses_into_the_planned_chunk_count(chunks: int) -> None:
    gen = d.TextGen("seed")
    for serial in range(20):
        text = gen.document(chunks, serial)
        assert len(markdown.parse(text).chunks) == chunks


def test_documents_for_a_scope_add_up() -> None:
    plan = d.ScopePlan("t", "u", 113)
    pairs = list(d.documents_for(plan))
    assert sum(size for _, size in pairs) == 113
    assert sum(len(markdown.parse(text).chunks) for text, _ in pairs) == 113
    assert pairs == list(d.documents_for(plan))  # deterministic per scope


def test_text_generator_is_varied_and_deterministic() -> None:
    one, two = d.TextGen("s"), d.TextGen("s")
    sentences = [one.sentence(one.topic()) for _ in range(500)]
    assert sentences == [two.sentence(two.topic()) for _ in range(500)]
    assert len(set(sentences)) > 490
    queries = [one.query() for _ in range(100)]
    assert all(q.strip() for q in queries)
    assert len(set(queries)) > 90
