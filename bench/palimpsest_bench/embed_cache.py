"""An opt-in embedding cache for the evaluations (repeated tuning runs only)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from array import array
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from palimpsest.embedding import Embedder, Vector
from palimpsest.embedding.models import embed_queries


class CachedEmbedder:
    """Wraps an embedder with a SQLite cache keyed by model and text; only used on request.

    Same vectors as the wrapped model (stored as float32, which is what the model makes).
    Questions go through the model's query side (``embed_queries``, e5's ``query: `` prefix)
    and are cached apart from passages: the same words make another vector there.
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()  # embed runs in worker threads; one connection
        self._db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vec BLOB)")

    def _key(self, text: str, side: str) -> str:
        # Passages keep the key of before, so an existing cache stays valid.
        name = self.model_name if side == "passage" else f"{self.model_name}\x1f{side}"
        return hashlib.sha256(f"{name}\x1f{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return self._cached(texts, "passage", self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return self._cached(texts, "query", partial(embed_queries, self.inner))

    def _cached(
        self, texts: Sequence[str], side: str, model: Callable[[list[str]], list[Vector]]
    ) -> list[Vector]:
        keys = [self._key(t, side) for t in texts]
        found: dict[str, Vector] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                sql = f"SELECT key, vec FROM v WHERE key IN ({marks})"  # noqa: S608 - '?' only
                for key, blob in self._db.execute(sql, part):
                    found[key] = Vector(array("f", blob).tolist())
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            vectors = model([texts[i] for i in missing])
            rows = []
            for i, vec in zip(missing, vectors, strict=True):
                found[keys[i]] = vec
                rows.append((keys[i], array("f", vec).tobytes()))
            with self._lock:
                self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
                self._db.commit()
        return [found[k] for k in keys]

    def close(self) -> None:
        with self._lock:
            self._db.close()
