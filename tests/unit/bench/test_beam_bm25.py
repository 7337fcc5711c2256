"""The plain BM25 baseline of ``eval beam --mode bm25``."""

from __future__ import annotations

from palimpsest_bench.beam_bm25 import Index, rank_all, tokens
from palimpsest_bench.recall_data import Dataset, Doc, Query


def test_tokens_drop_stop_words_and_do_not_stem() -> None:
    assert tokens("The servers, and THE server: port 3000!") == [
        "servers",
        "server",
        "port",
        "3000",
    ]


def test_rarer_terms_and_shorter_messages_rank_first() -> None:
    index = Index.of(
        [
            ("long", "user: redis cache " + "filler words here " * 30),
            ("short", "user: redis cache"),
            ("common", "user: cache cache"),
            ("none", "assistant: nothing relevant"),
        ]
    )
    ranked = index.search("which redis cache?", 10)
    # The long message holds both terms but its length normalisation puts it last.
    assert ranked == ["short", "common", "long"]
    # Without it (b = 0) both messages holding both terms tie, in their order, above.
    assert index.search("which redis cache?", 10, b=0.0) == ["long", "short", "common"]
    assert "none" not in ranked  # a document sharing no term is not returned
    assert index.search("the of and", 10) == []
    assert Index.of([]).search("redis", 10) == []


def test_rank_all_searches_only_the_owners_messages() -> None:
    docs = [
        Doc("c1", "t", None, (("c1:0", "user: kafka topic"),)),
        Doc("c2", "t", None, (("c2:0", "user: kafka topic kafka"),)),
    ]
    queries = [
        Query("q", "c1", "kafka", frozenset({"c1:0"})),
        Query("r", "c3", "kafka", frozenset()),
    ]
    assert rank_all(Dataset("beam", docs, queries), 10) == [["c1:0"], []]
