"""Statements of memory as files (resolvers/documents/memory_files.py)."""

from __future__ import annotations

from palimpsest.cypher.driver.executor import Statement

# The live documents below a directory with their current chunks' (text, separator) pairs in
# reading order, so a listing sizes every file in one statement. Newest first per path, as
# FIND_BY_PATH picks.
LIST_FILES = Statement(
    "LIST_FILES",
    """
MATCH (d:Document {scope_key: $scope_key})
WHERE d.path STARTS WITH $prefix AND d.deleted_at IS NULL
WITH d ORDER BY d.path, d.updated_at DESC LIMIT $limit
CALL (d) {
  MATCH (c:Chunk {scope_key: $scope_key, document_id: d.id})
  WHERE c.index IS NOT NULL
  WITH c ORDER BY c.index
  RETURN collect([c.text, c.separator]) AS pieces
}
RETURN d.id AS id, d.path AS path, d.preamble AS preamble, pieces
""",
)
