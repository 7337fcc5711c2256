"""Recall's newer-first lever (docs/reference/recall.md, Levers): the one read it needs.
``CHUNK_TOLD`` reads, for each chunk hit, its embedding and when and where it was told (its
observed and stored times, its document and place in it, and its first ``$chars``
characters, which name its speaker and the values it states); one scope only.
"""

from palimpsest.cypher.driver.executor import Statement

CHUNK_TOLD = Statement(
    "CHUNK_TOLD",
    """
UNWIND $ids AS id
MATCH (c:Chunk {scope_key: $scope_key, id: id})
RETURN c.id AS id, c.embedding AS embedding, c.observed_at AS observed_at,
       coalesce(c.version_at, c.created_at) AS stored_at, c.document_id AS document_id,
       coalesce(c.seq, (c.index + 1) * $gap) AS place, left(c.text, $chars) AS text
""",
)
