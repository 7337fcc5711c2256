"""The recall evaluation's pure parts: metrics, aggregation and Markdown units (synthetic data)."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest

from palimpsest.domain.documents import markdown
from palimpsest_bench.recall_data import (
    Dataset,
    Query,
    load_locomo,
    load_scifact,
    one_block,
    units_markdown,
    wire_time,
)
from palimpsest_bench.recall_metrics import (
    dedupe,
    hit_at_k,
    mean_metrics,
    mrr_at_k,
    ndcg_at_k,
    recall_at_k,
    score,
)
from palimpsest_bench.recall_summary import summarise


def test_hit_at_k_counts_any_relevant_in_the_top_k() -> None:
    ranked = ["a", "b", "c", "d"]
    assert hit_at_k(ranked, {"c", "z"}, 3) == 1.0
    assert hit_at_k(ranked, {"d"}, 3) == 0.0
    assert hit_at_k([], {"a"}, 10) == 0.0
    assert hit_at_k(ranked, set(), 10) == 0.0


def test_recall_at_k_is_the_share_of_relevant_found() -> None:
    ranked = ["a", "b", "c", "d"]
    assert recall_at_k(ranked, {"a", "d"}, 2) == 0.5
    assert recall_at_k(ranked, {"a", "d"}, 4) == 1.0
    assert recall_at_k(ranked, {"x"}, 4) == 0.0
    assert recall_at_k(ranked, set(), 4) == 0.0


def test_ndcg_binary_gains_and_ideal_ordering() -> None:
    assert ndcg_at_k(["a", "b"], {"a"}, 10) == pytest.approx(1.0)
    # one relevant at rank 2: (1/log2 3) / 1
    assert ndcg_at_k(["x", "a"], {"a"}, 10) == pytest.approx(1 / math.log2(3))
    # two relevant, found at ranks 1 and 3: (1 + 1/2) / (1 + 1/log2 3)
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "x", "b"], {"a", "b"}, 10) == pytest.approx(expected)
    # the ideal is capped at k relevant items
    assert ndcg_at_k(["a"], {"a", "b", "c"}, 1) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "a"], {"a"}, 1) == 0.0
    assert ndcg_at_k(["a"], set(), 10) == 0.0


def test_mrr_is_the_reciprocal_of_the_first_relevant_rank_within_k() -> None:
    assert mrr_at_k(["x", "y", "a", "b"], {"a", "b"}, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["x", "y", "a"], {"a"}, 2) == 0.0
    assert mrr_at_k(["a"], {"a"}, 10) == 1.0


def test_dedupe_keeps_first_occurrence() -> None:
    assert dedupe(["d1", "d2", "d1", "d3", "d2"]) == ["d1", "d2", "d3"]


def test_score_reports_each_datasets_metric_names() -> None:
    assert set(score("locomo", ["a"], {"a"})) == {"recall@5", "recall@10", "ndcg@10", "mrr@10"}
    assert set(score("scifact", ["a"], {"a"})) == {"ndcg@10", "recall@100"}
    assert set(score("timeqa", ["a"], {"a"})) == {"ndcg@10", "mrr@10"}


def test_mean_metrics_averages_and_rounds() -> None:
    rows = [{"m": 1.0, "n": 0.0}, {"m": 0.0, "n": 0.0}, {"m": 1.0, "n": 1.0}]
    assert mean_metrics(rows) == {"m": 0.6667, "n": 0.3333}
    assert mean_metrics([]) == {}


def test_locomo_headline_covers_categories_1_to_4_and_by_category_all() -> None:
    ds = Dataset("locomo", [], [])
    per_query = [
        (Query("q1", "s", "?", frozenset({"D1:1"}), "1"), score("locomo", ["D1:1"], {"D1:1"})),
        (Query("q2", "s", "?", frozenset({"D1:2"}), "4"), score("locomo", ["D1:1"], {"D1:2"})),
        (Query("q3", "s", "?", frozenset({"D1:3"}), "5"), score("locomo", ["D1:3"], {"D1:3"})),
    ]
    headline, by_category = summarise(ds, per_query)
    assert headline["recall@10"] == 0.5  # category 5 is not in the headline
    assert by_category is not None
    assert by_category["5"]["recall@10"] == 1.0
    assert by_category["1"] == {
        "name": "multi-hop",
        "n": 1,
        "recall@5": 1.0,
        "recall@10": 1.0,
        "ndcg@10": 1.0,
        "mrr@10": 1.0,
    }
    assert by_category["4"]["n"] == 1
    assert by_category["4"]["mrr@10"] == 0.0


def test_summarise_has_no_categories_outside_locomo() -> None:
    ds = Dataset("timeqa", [], [])
    rows = [(Query("q", "o", "?", frozenset({"p#1"})), score("timeqa", ["p#1"], {"p#1"}))]
    assert summarise(ds, rows) == ({"ndcg@10": 1.0, "mrr@10": 1.0}, None)


@pytest.mark.parametrize(
    "text",
    [
        "Alice: hello\n\nthere   friend",
        "- not a list",
        "# not a heading",
        "> not a quote",
        "```not a fence",
        "1. not an ordered list",
        "2) nor this",
        "<div>not html</div>",
        "---",
        "    indented",
        "* * *",
        "| a | b |",
    ],
)
def test_one_block_is_always_exactly_one_paragraph(text: str) -> None:
    line = one_block(text)
    parsed = markdown.parse(units_markdown([line, line])).chunks
    assert [c.type for c in parsed] == [markdown.ChunkType.PARAGRAPH] * 2
    assert [c.text.strip() for c in parsed] == [line, line]


def test_one_block_refuses_blank_text() -> None:
    with pytest.raises(ValueError, match="blank"):
        one_block(" \n\t ")


def test_units_markdown_puts_a_heading_chunk_first() -> None:
    parsed = markdown.parse(units_markdown(["one", "two"], heading="Title")).chunks
    assert [c.type for c in parsed] == [
        markdown.ChunkType.HEADING,
        markdown.ChunkType.PARAGRAPH,
        markdown.ChunkType.PARAGRAPH,
    ]


def test_wire_time_reads_naive_timestamps_as_utc() -> None:
    assert wire_time("2023-05-08T13:56:00") == "2023-05-08T13:56:00Z"
    assert wire_time("2023-05-08T13:56:00+02:00") == "2023-05-08T13:56:00+02:00"


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def test_load_locomo_makes_one_document_per_session_in_turn_order(tmp_path: Path) -> None:
    turn = {"sample_id": "s1", "session_date_time": "noon", "observed_at": "2020-01-02T12:00:00"}
    _jsonl(
        tmp_path / "turns.jsonl",
        [
            {**turn, "session": 1, "turn_index": 1, "dia_id": "D1:2", "speaker": "B", "text": "b"},
            {**turn, "session": 1, "turn_index": 0, "dia_id": "D1:1", "speaker": "A", "text": "a"},
            {
                **turn,
                "session": 2,
                "turn_index": 0,
                "dia_id": "D2:1",
                "speaker": "A",
                "text": "c",
                "observed_at": "2020-01-09T08:00:00",
            },
        ],
    )
    _jsonl(
        tmp_path / "qa.jsonl",
        [{"sample_id": "s1", "qa_index": 0, "question": "q?", "category": 2, "evidence": ["D1:2"]}],
    )
    ds = load_locomo(tmp_path)
    assert [d.units for d in ds.docs] == [(("D1:1", "A: a"), ("D1:2", "B: b")), (("D2:1", "A: c"),)]
    assert ds.docs[0].observed_at == "2020-01-02T12:00:00Z"
    assert ds.docs[0].owner == "s1"
    # Asked right after the conversation: a day after its last session started.
    asked = "2020-01-10T08:00:00+00:00"
    assert ds.queries == [Query("s1#0", "s1", "q?", frozenset({"D1:2"}), "2", asked)]


def test_load_scifact_keeps_queries_with_qrels_only(tmp_path: Path) -> None:
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "7", "title": "T", "text": "abstract"}])
    _jsonl(tmp_path / "queries.jsonl", [{"_id": "1", "text": "claim"}, {"_id": "2", "text": "x"}])
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n1\t7\t1\n")
    ds = load_scifact(tmp_path)
    assert ds.by_document
    assert ds.docs[0].heading == "T"
    assert ds.docs[0].units == (("7", "abstract"),)
    assert ds.queries == [Query("1", "eval", "claim", frozenset({"7"}))]
