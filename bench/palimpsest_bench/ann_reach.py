"""How many of a scope's rows the filtered vector index cannot reach, even for their own vector.

Why: HNSW can leave a row with no way in (its neighbours' links pruned away), and then no
expansion or floor finds it, however many rows a search asks for; the overlap figures cannot
tell such a row from a near miss. A row asked for with its own stored vector scores 1.0 and
must come back among the first ``REACH_K``; one that does not is counted. Rows are taken in id
order, the first ``sample`` of the scope, so two runs on one index probe the same rows.
"""

from __future__ import annotations

from palimpsest.cypher.driver.executor import ScopedDatabase, Statement

REACH_K = 10
# Bench-only: the first ``$n`` embedded chunks of the scope by id, with their stored vectors.
SCOPE_VECTORS = Statement(
    "BENCH_SCOPE_VECTORS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.embedding IS NOT NULL
RETURN c.id AS id, c.embedding AS vector
ORDER BY c.id
LIMIT $n
""",
)
# Bench-only: the filtered index's answer alone, without the legs' tails.
OWN_VECTOR = Statement(
    "BENCH_OWN_VECTOR",
    """CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (VECTOR INDEX chunk_embedding FOR $vector WHERE c.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score
RETURN collect(c.id) AS ids
""",
)


async def unreachable(db: ScopedDatabase, sample: int) -> dict[str, int]:
    """Of the scope's first ``sample`` rows, how many the index does not answer for their
    own vector (``unreachable_rows`` of ``reach_sample``)."""
    rows = await db.read(SCOPE_VECTORS, {"n": sample})
    missed = 0
    for row in rows:
        [answer] = await db.read(OWN_VECTOR, {"vector": row["vector"], "k": REACH_K})
        if row["id"] not in answer["ids"]:
            missed += 1
    return {"unreachable_rows": missed, "reach_sample": len(rows)}
