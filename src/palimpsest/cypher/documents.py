"""Documents plane: ``:Document`` -[:HAS_ROOT]-> root ``:Chunk`` -[:HAS_CHILD]-> chunks.

Import writes the document, its chunks and the tree and reading-order edges in one statement:
the edges are drawn between the nodes just created, by list position, with no index lookups.

``:NEXT`` links chunks in reading order. Every node and relationship carries the scope, and
every statement filters on ``$scope_key``.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement

_SCOPE: LiteralString = (
    "tenant_id: $tenant_id, scope: $scope, owner_id: $owner_id, scope_key: $scope_key"
)
_PROVENANCE: LiteralString = (
    "session_id: $session_id, run_id: $run_id, agent_name: $agent_name, model: $model, "
    "origin: $origin, writer_id: $writer_id, writer_key: $writer_key"
)

CREATE_DOCUMENT = Statement(
    "CREATE_DOCUMENT",
    "CREATE (d:Document {id: $id, title: $title, path: $path, preamble: $preamble, "
    "revision: 1, created_at: $now, updated_at: $now, " + _SCOPE + ", " + _PROVENANCE + "})"
    "\nCREATE (:DocumentRevision {document_id: $id, revision: 1, created_at: $now, "
    "deleted: false, changed_chunks: size($chunks), title: $title, path: $path, "
    "preamble: $preamble, " + _SCOPE + ", " + _PROVENANCE + "})"
    "\nCREATE (root:Chunk {id: $root_id, document_id: $id, type: $root_type, text: '', "
    "separator: '', position: 0, revision: 1, created_at: $now, updated_at: $now, "
    + _SCOPE
    + ", "
    + _PROVENANCE
    + "})"
    "\nCREATE (d)-[:HAS_ROOT {scope_key: $scope_key}]->(root)"
    """
WITH root
UNWIND $chunks AS c
CREATE (x:Chunk)
SET x = c, x.document_id = $id, x.revision = 1, x.observed_at = $observed_at,
    x.created_at = $now, x.updated_at = $now, x.from_revision = 1, x.version_at = $now,
    x.tenant_id = $tenant_id, x.scope = $scope, x.owner_id = $owner_id,
    x.scope_key = $scope_key, x.session_id = $session_id, x.run_id = $run_id,
    x.agent_name = $agent_name, x.model = $model, x.origin = $origin,
    x.writer_id = $writer_id, x.writer_key = $writer_key
WITH root, collect(x) AS xs
UNWIND range(0, size(xs) - 1) AS i
WITH root, xs, i, xs[i] AS x
WITH xs, i, x, CASE WHEN $parents[i] < 0 THEN root ELSE xs[$parents[i]] END AS p
CREATE (p)-[:HAS_CHILD {position: x.position, scope_key: $scope_key}]->(x)
FOREACH (n IN CASE WHEN i + 1 < size(xs) THEN [xs[i + 1]] ELSE [] END |
  CREATE (x)-[:NEXT {scope_key: $scope_key}]->(n))
RETURN count(x) AS chunks
""",
)

LIST_DOCUMENTS = Statement(
    "LIST_DOCUMENTS",
    """
MATCH (d:Document {scope_key: $scope_key})
WHERE coalesce(d.path, '') STARTS WITH $path_prefix AND d.id > $after AND d.deleted_at IS NULL
RETURN d {.id, .title, .path, .created_at, .updated_at, .tenant_id, .session_id, .run_id,
          .agent_name, .model, .origin, .writer_id, .compaction_generation,
          revision: coalesce(d.revision, 1)} AS document,
       COUNT { (c:Chunk {scope_key: $scope_key, document_id: d.id}) } - 1 AS chunk_count
ORDER BY d.id
LIMIT $limit
""",
)

GET_DOCUMENT = Statement(
    "GET_DOCUMENT",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
WHERE d.deleted_at IS NULL
RETURN d {.id, .title, .path, .preamble, .created_at, .updated_at, .tenant_id, .session_id,
          .run_id, .agent_name, .model, .origin, .writer_id, .compaction_generation,
          revision: coalesce(d.revision, 1)} AS document
""",
)

_CHUNK: LiteralString = """
RETURN c {.id, .document_id, .type, .text, .separator, .level, .language, .position, .index,
          .revision, .start_line, .end_line, .start_char, .end_char, .observed_at,
          .created_at, .updated_at, .tenant_id, .session_id, .run_id, .agent_name, .model,
          .origin, .writer_id, .compaction_generation} AS chunk,
       p.id AS parent_id
"""

GET_DOCUMENT_CHUNKS = Statement(
    "GET_DOCUMENT_CHUNKS",
    """
MATCH (c:Chunk {scope_key: $scope_key, document_id: $id})
WHERE c.index IS NOT NULL
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key})-[:HAS_CHILD]->(c)
WHERE p.index IS NOT NULL
"""
    + _CHUNK
    + "ORDER BY c.index",
)

GET_CHUNK = Statement(
    "GET_CHUNK",
    """
MATCH (c:Chunk {scope_key: $scope_key, id: $id})
WHERE c.index IS NOT NULL
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key})-[:HAS_CHILD]->(c)
WHERE p.index IS NOT NULL
"""
    + _CHUNK,
)

# The document's lock first (one revision at a time), then the chunk's: the revision compared
# below is the latest committed one, so two editors holding the same one cannot both win. A
# fresh edit copies the old content to a closed ``:ChunkVersion`` (cypher/revisions.py) and
# opens document revision ``$next``; the caller records it (BUMP_DOCUMENT).
LOCK_CHUNK_DOCUMENT = Statement(
    "LOCK_CHUNK_DOCUMENT",
    """
MATCH (c:Chunk {scope_key: $scope_key, id: $id})
WHERE c.index IS NOT NULL
MATCH (d:Document {scope_key: $scope_key, id: c.document_id})
SET d.locked_at = $now
WITH d
OPTIONAL MATCH (d)-[:HAS_ROOT]->(root:Chunk {scope_key: $scope_key})
RETURN d {.id, .title, .path, .preamble, .deleted_at, .created_at,
          revision: coalesce(d.revision, 1)} AS document, root.id AS root_id
""",
)

UPDATE_CHUNK = Statement(
    "UPDATE_CHUNK",
    """
MATCH (c:Chunk {scope_key: $scope_key, id: $id})
WHERE c.index IS NOT NULL
SET c.locked_at = $now
WITH c, c.revision = $revision AS fresh, c.text AS old_text
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key})-[:HAS_CHILD]->(c)
WHERE p.index IS NOT NULL
WITH c, fresh, old_text, p.id AS parent_id, coalesce(c.seq, (c.index + 1) * $gap) AS seq
FOREACH (_ IN CASE WHEN fresh THEN [1] ELSE [] END |
  CREATE (v:ChunkVersion)
  SET v = properties(c), v.to_revision = $next, v.expired_at = $now,
      v.from_revision = coalesce(c.from_revision, 1),
      v.version_at = coalesce(c.version_at, c.created_at), v.seq = seq, v.parent_id = parent_id
  REMOVE v.ft, v.ft_tf, v.ft_len, v.locked_at
  SET c.text = $text, c.embedding = $embedding, c += coalesce($embedding_dual, {}),
      c.revision = c.revision + 1,
      c.seq = seq, c.from_revision = $next, c.version_at = $now,
      c.updated_at = $now, c.session_id = $session_id, c.run_id = $run_id,
      c.agent_name = $agent_name, c.model = $model, c.origin = $origin,
      c.writer_id = $writer_id, c.writer_key = $writer_key)
RETURN fresh, c.revision AS revision, old_text
""",
)

# A chunk set and its reading-order neighbours, each with its own neighbours' text: what a
# full-text representation is rebuilt from after an edit or an append (``NEXT`` edges).
# The chunks ``$ids``, their reading-order neighbours and (``$below``) every chunk under them
# in the tree, each with what its representation quotes: its neighbours' texts, its
# document's title and the texts of the headings above it.
READ_CHUNK_CONTEXT = Statement(
    "READ_CHUNK_CONTEXT",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.id IN $ids AND c.index IS NOT NULL
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key})-[:NEXT]->(c)
OPTIONAL MATCH (c)-[:NEXT]->(n:Chunk {scope_key: $scope_key})
WITH collect(c) AS cs, collect(p) + collect(n) AS around
WITH cs + around + CASE WHEN $below THEN COLLECT {
  UNWIND cs AS c
  MATCH (c)-[:HAS_CHILD {scope_key: $scope_key}]->+(k:Chunk {scope_key: $scope_key})
  WHERE k.index IS NOT NULL
  RETURN k
} ELSE [] END AS all
UNWIND all AS x
WITH DISTINCT x
OPTIONAL MATCH (xp:Chunk {scope_key: $scope_key})-[:NEXT]->(x)
OPTIONAL MATCH (x)-[:NEXT]->(xn:Chunk {scope_key: $scope_key})
OPTIONAL MATCH (d:Document {scope_key: $scope_key, id: x.document_id})
RETURN x.id AS id, x.text AS text, x.ft AS ft, x.ft_tf AS ft_tf, x.speaker AS speaker,
       x.ft_len IS NOT NULL AS indexed, xp.text AS prev, xn.text AS next,
       x.observed_at AS observed_at, d.title AS title,
       CASE WHEN $below THEN COLLECT {
         MATCH (h:Chunk {scope_key: $scope_key})-[:HAS_CHILD {scope_key: $scope_key}]->+(x)
         WHERE h.type = $heading
         RETURN h.text
       } ELSE [] END AS headings
""",
)

WRITE_CHUNK_TERMS = Statement(
    "WRITE_CHUNK_TERMS",
    """
UNWIND $rows AS r
MATCH (c:Chunk {scope_key: $scope_key, id: r.id})
SET c += r.props
RETURN count(c) AS written
""",
)
