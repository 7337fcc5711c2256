"""Passages: a long chunk's further vectors (``domain/documents/passages.py``).

A ``:Passage`` lives in its chunk's scope and names its chunk by id (``chunk_id``), with no
relationship: it is a derived row, like the chunk's term statistics. It carries the chunk's
``version_at`` from when it was written, so a passage of a text since edited (or closed into a
``:ChunkVersion``) never speaks for the new text: the vector legs below join the current
``:Chunk`` and keep only passages of its current version. ``text`` is kept so a model
migration (``cypher/embedding_slots.py``) can embed it again like any other row.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.recall import CHUNK_CUES, CHUNK_HIT, CHUNK_LIVE

# Replace the passages of each chunk named (``$rows``: chunk_id, passages) with those given,
# written after the chunk in the same transaction; an empty list only removes the old ones.
WRITE_PASSAGES = Statement(
    "WRITE_PASSAGES",
    """
UNWIND $rows AS r
MATCH (c:Chunk {scope_key: $scope_key, id: r.chunk_id})
CALL (c) {
  MATCH (old:Passage {scope_key: $scope_key, chunk_id: c.id})
  DELETE old
}
WITH c, r
UNWIND r.passages AS x
CREATE (p:Passage)
SET p = x, p.chunk_id = c.id, p.document_id = c.document_id,
    p.version_at = coalesce(c.version_at, c.created_at),
    p.tenant_id = $tenant_id, p.scope = $scope, p.owner_id = $owner_id,
    p.scope_key = $scope_key
RETURN count(p) AS written
""",
)

# The passages of chunks that are gone or closed (a document deleted, chunks replaced).
DELETE_PASSAGES = Statement(
    "DELETE_PASSAGES",
    """
UNWIND $ids AS id
MATCH (p:Passage {scope_key: $scope_key, chunk_id: id})
DELETE p
RETURN count(*) AS deleted
""",
)

# The vector legs' tail: one record of parallel lists, best passage first; per passage its
# chunk's id, whether the passage is of the chunk's current text (``current``), the chunk's
# liveness, cues and hit projection (a list of one, so a missing chunk keeps its place).
_TAIL: LiteralString = (
    """
OPTIONAL MATCH (c:Chunk {scope_key: $scope_key, id: p.chunk_id})
WITH p, score, c,
     c IS NOT NULL AND coalesce(c.version_at, c.created_at) = p.version_at AS current
ORDER BY score DESC, p.chunk_id, p.seq
RETURN collect(p.chunk_id) AS ids, collect(score) AS scores, collect(current) AS current,
       collect(current AND coalesce("""
    + CHUNK_LIVE
    + """, false)) AS live,
       collect([p.seq, p.start_char, p.end_char]) AS passages"""
    + CHUNK_CUES
    + ", collect(["
    + CHUNK_HIT
    + "]) AS rows"
)

VECTOR_PASSAGES = Statement(
    "VECTOR_PASSAGES",
    """CYPHER 25
MATCH (p:Passage)
  SEARCH p IN (VECTOR INDEX passage_embedding FOR $vector WHERE p.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score
WITH p, score WHERE p.scope_key = $scope_key"""
    + _TAIL,
)

# Every passage of the scope by cosine: when the index read fewer than asked (a small scope,
# or a short approximate read).
EXACT_PASSAGES = Statement(
    "EXACT_PASSAGES",
    """
MATCH (p:Passage {scope_key: $scope_key})
WHERE p.embedding IS NOT NULL
WITH p, vector.similarity.cosine(p.embedding, $vector) AS score
ORDER BY score DESC, p.chunk_id, p.seq
LIMIT $k"""
    + _TAIL,
)

# How many passages a scope holds, and how many chunks have any (the cost figures).
COUNT_PASSAGES = Statement(
    "COUNT_PASSAGES",
    """
MATCH (p:Passage {scope_key: $scope_key})
RETURN count(p) AS passages, count(DISTINCT p.chunk_id) AS chunks
""",
)
