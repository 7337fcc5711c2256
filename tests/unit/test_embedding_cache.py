"""The embedding cache: exact vectors, one model run per new text, bounded, LRU."""

from __future__ import annotations

from collections.abc import Sequence

from palimpsest.embedding import CachedEmbedder, Vector


class Counting:
    model_name = "counting"
    dimensions = 2

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.seen += texts
        return [Vector([float(len(t)), float(sum(map(ord, t)))]) for t in texts]


def test_a_repeated_text_is_embedded_once_and_answers_the_same_vector() -> None:
    inner = Counting()
    cache = CachedEmbedder(inner, size=10)
    first = cache.embed(["alpha", "beta", "alpha"])
    assert inner.seen == ["alpha", "beta"]  # a batch's duplicate runs the model once too
    assert cache.embed(["beta", "alpha"]) == [first[1], first[0]]
    assert inner.seen == ["alpha", "beta"]
    assert cache.peek(["alpha", "beta"]) == [first[0], first[1]]
    assert cache.peek(["alpha", "gamma"]) is None


def test_answers_are_copies_a_caller_cannot_spoil() -> None:
    cache = CachedEmbedder(Counting(), size=10)
    [alpha] = Counting().embed(["alpha"])
    cache.embed(["alpha"])[0].append(99.0)
    peeked = cache.peek(["alpha"])
    assert peeked is not None
    assert peeked[0] == alpha
    peeked[0].clear()
    assert cache.embed(["alpha"]) == [alpha]


def test_the_least_recently_used_text_goes_first() -> None:
    inner = Counting()
    cache = CachedEmbedder(inner, size=2)
    cache.embed(["a", "b"])
    cache.peek(["a"])  # a is now more recent than b
    cache.embed(["c"])
    assert cache.peek(["a"]) is not None
    assert cache.peek(["b"]) is None
    assert inner.seen == ["a", "b", "c"]


def test_long_texts_are_not_kept() -> None:
    inner = Counting()
    cache = CachedEmbedder(inner, size=10)
    long = "x" * (CachedEmbedder.MAX_CHARS + 1)
    cache.embed([long])
    cache.embed([long])
    assert inner.seen == [long, long]
