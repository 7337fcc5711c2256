"""The exact in-scope vector search for scopes too large for a Cypher brute-force scan per
query (a million rows: minutes each), on synthetic-vector datasets only.

``HashEmbedder`` vectors depend on the text alone, so the scope's stored vectors are
rebuilt here from its chunks' texts (read once, by id pages) and every query is scored
against all of them with numpy: the same vectors, the same cosine, ties by id as in
``EXACT_CHUNKS``. Memory stays at one page of vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from palimpsest.cypher.driver.executor import ScopedDatabase, Statement
from palimpsest_bench.common import HashEmbedder

PAGE = 50_000
# Bench-only: a scope's embedded chunks' ids and texts, one page after ``$after`` (by id).
SCOPE_TEXTS = Statement(
    "BENCH_SCOPE_TEXTS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.id > $after AND c.embedding IS NOT NULL
RETURN c.id AS id, c.text AS text
ORDER BY c.id
LIMIT $page
""",
)


async def exact_top(
    db: ScopedDatabase, embedder: HashEmbedder, queries: Sequence[Sequence[float]], k: int
) -> list[list[str]]:
    """For each query, the ids of its ``k`` nearest chunks of the scope, best first."""
    q = np.asarray(queries, dtype=np.float64)
    best_scores = [np.empty(0) for _ in queries]
    best_ids: list[list[str]] = [[] for _ in queries]
    after = ""
    while True:
        rows = await db.read(SCOPE_TEXTS, {"after": after, "page": PAGE})
        if not rows:
            break
        after = rows[-1]["id"]
        ids = [r["id"] for r in rows]
        m = embedder.matrix([r["text"] for r in rows])
        scores = m @ q.T  # unit vectors: the dot product is the cosine
        for j in range(len(queries)):
            merged_scores = np.concatenate([best_scores[j], scores[:, j]])
            merged_ids = best_ids[j] + ids
            keep = _top(merged_scores, merged_ids, k)
            best_scores[j] = merged_scores[keep]
            best_ids[j] = [merged_ids[i] for i in keep]
    return best_ids


def _top(scores: np.ndarray, ids: Sequence[str], k: int) -> list[int]:
    """Indexes of the best ``k``, by score then id (as ``ORDER BY score DESC, c.id``)."""
    if len(scores) > 4 * k:
        # Everything tied with the k-th best stays in, so ties are broken by id below.
        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
        candidates = np.nonzero(scores >= cut)[0].tolist()
    else:
        candidates = list(range(len(scores)))
    candidates.sort(key=lambda i: (-scores[i], ids[i]))
    return candidates[:k]
