"""Recall's per-call controls (docs/reference/recall.md, Per-call controls): the one read they
need. ``CHUNK_DOCUMENTS`` names the document of each chunk candidate, so that
``maxPerDocument`` can cap hits per document before the top-k is cut; one scope only.
"""

from palimpsest.cypher.driver.executor import Statement

CHUNK_DOCUMENTS = Statement(
    "CHUNK_DOCUMENTS",
    """
UNWIND $ids AS id
MATCH (c:Chunk {scope_key: $scope_key, id: id})
RETURN c.id AS id, c.document_id AS document_id
""",
)
