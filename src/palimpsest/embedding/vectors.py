"""The embedding's own types: the vector, the embedder and token counter protocols, the
default model's name. Apart from the package's face so ``models`` and ``slots`` need not
import the face (which loads the models): no import circle."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class Vector(list[float]):
    """An embedding. The neo4j driver formats every query's parameters with ``repr`` for a
    debug line even when debug logging is off; for 384-float lists that is real CPU per chunk
    on ingest, so the ``repr`` here is short (and keeps vectors out of any log by accident)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<vector of {len(self)} floats>"


class Embedder(Protocol):
    @property
    def model_name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[Vector]: ...


@runtime_checkable
class TokenCounter(Protocol):
    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...


_PIECE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def count_tokens(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """Tokens of each text by the embedding model's own tokenizer (no special tokens, no
    truncation); an embedder without one (a test's) counts words and punctuation marks."""
    if isinstance(embedder, TokenCounter):
        return embedder.count_tokens(texts)
    return [len(_PIECE.findall(t)) for t in texts]
