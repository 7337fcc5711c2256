"""The eval's opt-in embedding cache keeps a model's query side (e5's ``query: `` prefix)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from palimpsest.embedding import Vector
from palimpsest.embedding.models import embed_queries
from palimpsest_bench.embed_cache import CachedEmbedder


class TwoSided:
    """Passages and questions make different vectors, as with multilingual-e5."""

    model_name = "two-sided"
    dimensions = 2

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.calls.append(("passage", list(texts)))
        return [Vector([1.0, float(len(t))]) for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        self.calls.append(("query", list(texts)))
        return [Vector([-1.0, float(len(t))]) for t in texts]


def test_questions_through_the_cache_use_the_query_side(tmp_path: Path) -> None:
    inner = TwoSided()
    cache = CachedEmbedder(inner, tmp_path / "v.sqlite")
    try:
        assert embed_queries(cache, ["when?"]) == [[-1.0, 5.0]]
        assert cache.embed(["when?"]) == [[1.0, 5.0]]  # same words, the passage side
        assert embed_queries(cache, ["when?"]) == [[-1.0, 5.0]]  # from the cache
        assert cache.embed(["when?"]) == [[1.0, 5.0]]
    finally:
        cache.close()
    assert inner.calls == [("query", ["when?"]), ("passage", ["when?"])]


def test_passages_keep_their_keys_so_an_existing_cache_stays_valid(tmp_path: Path) -> None:
    cache = CachedEmbedder(TwoSided(), tmp_path / "v.sqlite")
    try:
        cache.embed(["a turn"])
        cache.embed_queries(["a turn"])
        keys = {k for (k,) in cache._db.execute("SELECT key FROM v")}
    finally:
        cache.close()
    passage = hashlib.sha256(b"two-sided\x1fa turn").hexdigest()
    assert passage in keys
    assert len(keys) == 2
