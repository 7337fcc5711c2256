"""The two legs of hybrid recall, per kind of row: a vector leg and a full-text leg.

Vector legs filter on ``scope_key`` inside the index (``SEARCH ... WHERE``), so a tiny scope
is searched as thoroughly as a big one. Full-text legs carry the scope as a required clause
of the Lucene query. Both re-check the scope in Cypher after the index call, and apply the
row filters (expiry, key prefix, validity) as a ``live`` flag, so the resolver can tell a
short pool (over-fetch) from a small scope (exact fallback). Vector scores are Neo4j's normalised
cosine, ``(1 + cos) / 2``; the resolver turns them back into the raw cosine.
"""

from typing import LiteralString

from palimpsest.cypher.executor import Statement
from palimpsest.cypher.facts import FACT_COLUMNS, FACT_VISIBLE
from palimpsest.cypher.memory import NOTE_VALID

# ``live``: kept by every filter. ``untimely``: kept but for the time view (a note not valid at
# ``$as_of``), which the time-filter report counts like a fact the time view dropped.
_MEMORY_LIVE: LiteralString = (
    """
WITH m, score
WHERE m.scope_key = $scope_key
WITH m, score, m.key STARTS WITH $prefix AND (m.expires_at IS NULL OR m.expires_at > $now)
     AS kept, ($include_retired OR """
    + NOTE_VALID
    + """) AS timely
RETURN score, kept AND timely AS live, kept AND NOT timely AS untimely,
       m {.key, .scope, .text, .created_at, .updated_at, .observed_at, .valid_at, .invalid_at,
          .tenant_id, .session_id, .run_id, .agent_name, .model, .origin,
          .compaction_generation} AS row
"""
)

_CHUNK_LIVE: LiteralString = """
WITH c, score
WHERE c.scope_key = $scope_key
RETURN score, c.index IS NOT NULL AS live,
       c {.id, .scope, .document_id, .type, .text, .observed_at, .created_at, .tenant_id,
                 .session_id, .run_id, .agent_name, .model, .origin,
                 .compaction_generation} AS row
"""

_FACT_LIVE: LiteralString = (
    """
MATCH (s:Entity)-[f]->(o:Entity)
WHERE f.scope_key = $scope_key
RETURN score, """
    + FACT_VISIBLE
    + """ AS live,"""
    + FACT_COLUMNS
)

VECTOR_MEMORY = Statement(
    "VECTOR_MEMORY",
    """CYPHER 25
MATCH (m:Memory)
  SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector WHERE m.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score"""
    + _MEMORY_LIVE,
)

FULLTEXT_MEMORY = Statement(
    "FULLTEXT_MEMORY",
    """CYPHER 25
MATCH (m:Memory)
  SEARCH m IN (FULLTEXT INDEX memory_text FOR $lucene LIMIT $k)
  SCORE AS score"""
    + _MEMORY_LIVE,
)

VECTOR_CHUNKS = Statement(
    "VECTOR_CHUNKS",
    """CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (VECTOR INDEX chunk_embedding FOR $vector WHERE c.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score"""
    + _CHUNK_LIVE,
)

FULLTEXT_CHUNKS = Statement(
    "FULLTEXT_CHUNKS",
    """CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (FULLTEXT INDEX chunk_text FOR $lucene LIMIT $k)
  SCORE AS score"""
    + _CHUNK_LIVE,
)

VECTOR_FACTS = Statement(
    "VECTOR_FACTS",
    """CYPHER 25
MATCH ()-[f:FACT]->()
  SEARCH f IN (VECTOR INDEX fact_embedding FOR $vector WHERE f.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score"""
    + _FACT_LIVE,
)

FULLTEXT_FACTS = Statement(
    "FULLTEXT_FACTS",
    """CYPHER 25
MATCH ()-[f:FACT]->()
  SEARCH f IN (FULLTEXT INDEX fact_text FOR $lucene LIMIT $k)
  SCORE AS score"""
    + _FACT_LIVE,
)

# Exact legs: every embedded row of the scope, scored by cosine. The planner uses them when
# the index returns fewer rows than asked (a scope smaller than the pool, or an ANN short read).
EXACT_CHUNKS = Statement(
    "EXACT_CHUNKS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.embedding IS NOT NULL
WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k"""
    + _CHUNK_LIVE,
)

EXACT_MEMORY = Statement(
    "EXACT_MEMORY",
    """
MATCH (m:Memory {scope_key: $scope_key})
WHERE m.embedding IS NOT NULL
WITH m, vector.similarity.cosine(m.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k"""
    + _MEMORY_LIVE,
)

EXACT_FACTS = Statement(
    "EXACT_FACTS",
    """
MATCH ()-[f:FACT {scope_key: $scope_key}]->()
WHERE f.embedding IS NOT NULL
WITH f, vector.similarity.cosine(f.embedding, $vector) AS score
ORDER BY score DESC
LIMIT $k"""
    + _FACT_LIVE,
)
