"""The pure parts of ``bench recall-latency --growth``: sizes, labels, the dominant stage."""

from __future__ import annotations

import pytest

from palimpsest_bench.recall_growth import dominant_stage, label, parse_sizes


def test_sizes_take_suffixes_and_come_sorted_without_repeats() -> None:
    assert parse_sizes("1M, 10k,1000,10000") == [1000, 10_000, 1_000_000]
    assert parse_sizes("12,300") == [12, 300]


@pytest.mark.parametrize("text", ["", " , ", "1k,x", "0", "-5", "1.5k", "k"])
def test_what_is_not_a_size_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_sizes(text)


def test_labels_name_round_sizes_shortly_and_others_as_they_are() -> None:
    assert [label(n) for n in (12, 1000, 10_000, 1_000_000, 1500)] == [
        "12",
        "1k",
        "10k",
        "1M",
        "1500",
    ]


def test_the_dominant_stage_is_the_slowest_leaf_not_an_enclosing_stage() -> None:
    stages = {
        "total": {"p50": 250.0, "p95": 500.0},
        "resolver": {"p50": 200.0, "p95": 450.0},
        "legs": {"p50": 190.0, "p95": 440.0},
        "http_graphql": {"p50": 20.0, "p95": 30.0},
        "embedding": {"p50": 60.0, "p95": 90.0},
        "vector_documents": {"p50": 40.0, "p95": 80.0},
        "fulltext_documents": {"p50": 150.0, "p95": 400.0},
    }
    assert dominant_stage(stages) == {
        "stage": "fulltext_documents",
        "p50": 150.0,
        "p95": 400.0,
        "share_of_resolver_p50": 0.75,
    }
    assert dominant_stage({"total": {"p50": 1.0, "p95": 1.0}}) == {}
