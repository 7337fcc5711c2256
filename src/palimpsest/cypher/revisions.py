"""Document revisions (docs/decisions/0008-document-revisions.md).

The present is what it was: ``:Chunk`` nodes are the current revision's chunks, so every
present read, index and statistic sees the present only. A closed chunk version leaves the
label: it becomes ``:ChunkVersion`` (a deleted or replaced chunk is relabelled in place, an
edited one is copied before the edit), with ``from_revision``/``to_revision`` (half-open)
and ``version_at``/``expired_at`` (transaction time). A current chunk carries
``from_revision`` and ``version_at``; one written before revisions reads as revision 1.
``:DocumentRevision`` records each revision's time, author, title, path and preamble.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement

_SCOPE: LiteralString = (
    "tenant_id: $tenant_id, scope: $scope, owner_id: $owner_id, scope_key: $scope_key"
)

_VERSION_FIELDS: LiteralString = """{.id, .document_id, .type, .text, .separator, .level,
          .language, .revision, .seq, .observed_at, .created_at, .updated_at, .tenant_id,
          .session_id, .run_id, .agent_name, .model, .origin, .writer_id, .compaction_generation,
          .index, .position, .start_line, .end_line, .start_char, .end_char,
          from_revision: coalesce(c.from_revision, 1), to_revision: c.to_revision,
          version_at: coalesce(c.version_at, c.created_at), expired_at: c.expired_at}"""

# The document, locked for a new revision (the first SET takes its write lock, so two
# writers of one document write one revision after the other).
LOCK_DOCUMENT = Statement(
    "LOCK_DOCUMENT",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
SET d.locked_at = $now
WITH d
OPTIONAL MATCH (d)-[:HAS_ROOT]->(root:Chunk {scope_key: $scope_key})
RETURN d {.id, .title, .path, .preamble, .deleted_at, .created_at, .history_swept_revision,
          .history_swept_before, .quota_bytes, revision: coalesce(d.revision, 1)} AS document,
       root.id AS root_id
""",
)

# The live document a re-import to ``$path`` writes over: the last one written there.
FIND_BY_PATH = Statement(
    "FIND_BY_PATH",
    """
MATCH (d:Document {scope_key: $scope_key, path: $path})
WHERE d.deleted_at IS NULL
RETURN d.id AS id
ORDER BY d.updated_at DESC, d.id
LIMIT 1
""",
)

# The current chunks in reading order, with what a revision plan compares.
READ_CURRENT = Statement(
    "READ_CURRENT",
    """
MATCH (c:Chunk {scope_key: $scope_key, document_id: $id})
WHERE c.index IS NOT NULL
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key})-[:HAS_CHILD]->(c)
WHERE p.index IS NOT NULL
RETURN c.id AS id, c.type AS type, c.text AS text, c.separator AS separator,
       c.level AS level, c.language AS language, p.id AS parent_id,
       coalesce(c.seq, (c.index + 1) * $gap) AS seq
ORDER BY coalesce(c.seq, (c.index + 1) * $gap)
""",
)

# Closes chunks: their edges go, they leave the ``:Chunk`` label (and so every index and the
# term statistics, which the caller updates from ``indexed``).
CLOSE_CHUNKS = Statement(
    "CLOSE_CHUNKS",
    """
UNWIND $rows AS r
MATCH (c:Chunk {scope_key: $scope_key, id: r.id})
WHERE c.index IS NOT NULL
OPTIONAL MATCH (c)-[e:HAS_CHILD|NEXT]-(:Chunk {scope_key: $scope_key})
WITH c, r, collect(e) AS edges
FOREACH (e IN edges | DELETE e)
WITH c, r, CASE WHEN c.ft_len IS NULL THEN null
                ELSE {ft: c.ft, ft_tf: c.ft_tf, speaker: c.speaker} END AS indexed
REMOVE c:Chunk
SET c:ChunkVersion, c.to_revision = $revision, c.expired_at = $now,
    c.from_revision = coalesce(c.from_revision, 1),
    c.version_at = coalesce(c.version_at, c.created_at),
    c.seq = r.seq, c.parent_id = r.parent_id
REMOVE c.ft, c.ft_tf, c.ft_len, c.locked_at
RETURN collect(indexed) AS indexed
""",
)

# Edits chunks in place: the old content is copied to a closed version first (same id:
# ``:ChunkVersion`` has no uniqueness on it), then the node takes the new content.
EDIT_CHUNKS = Statement(
    "EDIT_CHUNKS",
    """
UNWIND $rows AS r
MATCH (c:Chunk {scope_key: $scope_key, id: r.id})
WHERE c.index IS NOT NULL
CREATE (v:ChunkVersion)
SET v = properties(c), v.to_revision = $revision, v.expired_at = $now,
    v.from_revision = coalesce(c.from_revision, 1),
    v.version_at = coalesce(c.version_at, c.created_at),
    v.seq = r.old_seq, v.parent_id = r.old_parent_id
REMOVE v.ft, v.ft_tf, v.ft_len, v.locked_at
SET c += r.props, c.embedding = coalesce(r.embedding, c.embedding),
    c += coalesce(r.embedding_dual, {}),
    c.revision = coalesce(c.revision, 1) + 1, c.from_revision = $revision,
    c.version_at = $now, c.updated_at = $now, c.session_id = $session_id, c.run_id = $run_id,
    c.agent_name = $agent_name, c.model = $model, c.origin = $origin,
    c.writer_id = $writer_id, c.writer_key = $writer_key
RETURN count(c) AS edited
""",
)

CREATE_CHUNKS = Statement(
    "CREATE_CHUNKS",
    """
UNWIND $rows AS r
CREATE (x:Chunk)
SET x = r.props, x.id = r.id, x.embedding = r.embedding, x += coalesce(r.embedding_dual, {}),
    x.document_id = $id,
    x.revision = 1, x.from_revision = $revision, x.version_at = $now,
    x.observed_at = $observed_at, x.created_at = $now, x.updated_at = $now,
    x.tenant_id = $tenant_id, x.scope = $scope, x.owner_id = $owner_id,
    x.scope_key = $scope_key, x.session_id = $session_id, x.run_id = $run_id,
    x.agent_name = $agent_name, x.model = $model, x.origin = $origin,
    x.writer_id = $writer_id, x.writer_key = $writer_key
RETURN count(x) AS created
""",
)

# The present-only fields of every chunk of the new revision (no revision reads them), and
# the tree and reading-order edges that changed.
PLACE_CHUNKS = Statement(
    "PLACE_CHUNKS",
    """
UNWIND $rows AS r
MATCH (c:Chunk {scope_key: $scope_key, id: r.id})
SET c += r.place
RETURN count(c) AS placed
""",
)

RELINK = Statement(
    "RELINK",
    """
CALL () {
  UNWIND $reparent AS r
  MATCH (c:Chunk {scope_key: $scope_key, id: r.id})
  OPTIONAL MATCH (:Chunk {scope_key: $scope_key})-[e:HAS_CHILD]->(c)
  DELETE e
  WITH DISTINCT c, r
  MATCH (p:Chunk {scope_key: $scope_key, id: coalesce(r.parent_id, $root_id)})
  CREATE (p)-[:HAS_CHILD {position: r.position, scope_key: $scope_key}]->(c)
}
CALL () {
  UNWIND $unlink AS pair
  MATCH (:Chunk {scope_key: $scope_key, id: pair[0]})-[e:NEXT]->
        (:Chunk {scope_key: $scope_key, id: pair[1]})
  DELETE e
}
CALL () {
  UNWIND $link AS pair
  MATCH (a:Chunk {scope_key: $scope_key, id: pair[0]}),
        (b:Chunk {scope_key: $scope_key, id: pair[1]})
  CREATE (a)-[:NEXT {scope_key: $scope_key}]->(b)
}
RETURN 1 AS done
""",
)

# The current reading-order edges of a document (what RELINK compares with).
READ_NEXT = Statement(
    "READ_NEXT",
    """
MATCH (a:Chunk {scope_key: $scope_key, document_id: $id})-[:NEXT]->
      (b:Chunk {scope_key: $scope_key})
RETURN a.id AS a, b.id AS b
""",
)

# A document written before revisions gets its revision 1 recorded first.
BUMP_DOCUMENT = Statement(
    "BUMP_DOCUMENT",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
FOREACH (_ IN CASE WHEN d.revision IS NULL THEN [1] ELSE [] END |
  CREATE (:DocumentRevision {document_id: d.id, revision: 1, created_at: d.created_at,
          deleted: false, changed_chunks: null, title: d.title, path: d.path,
          preamble: d.preamble, """
    + _SCOPE
    + """, session_id: d.session_id, run_id: d.run_id, agent_name: d.agent_name,
          model: d.model, origin: d.origin, writer_id: d.writer_id,
          writer_key: d.writer_key}))
SET d.revision = $revision, d.title = $title, d.path = $path, d.preamble = $preamble,
    d.updated_at = $now, d.deleted_at = CASE WHEN $deleted THEN $now ELSE null END
CREATE (:DocumentRevision {document_id: d.id, revision: $revision, created_at: $now,
        deleted: $deleted, changed_chunks: $changed, title: $title, path: $path,
        preamble: $preamble, """
    + _SCOPE
    + """, session_id: $session_id, run_id: $run_id,
        agent_name: $agent_name, model: $model, origin: $origin, writer_id: $writer_id,
        writer_key: $writer_key})
RETURN d.revision AS revision
""",
)

# History, newest first; a document written before revisions has no records (revision 1
# is answered from the document itself).
LIST_REVISIONS = Statement(
    "LIST_REVISIONS",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
OPTIONAL MATCH (r:DocumentRevision {scope_key: $scope_key, document_id: $id})
WHERE r.revision < $before
WITH d, r ORDER BY r.revision DESC LIMIT $limit
RETURN d {.id, .title, .path, .preamble, .created_at, .tenant_id, .session_id, .run_id,
          .agent_name, .model, .origin, .writer_id, .history_swept_revision,
          .history_swept_before, revision: coalesce(d.revision, 1)} AS document,
       collect(r {.revision, .created_at, .deleted, .changed_chunks, .title, .path,
                  .preamble, .tenant_id, .session_id, .run_id, .agent_name, .model,
                  .origin, .writer_id}) AS revisions
""",
)

# How far a retention sweep has removed the document's past (cypher/sweep.py): read again
# after a past revision's chunks, so a read that raced a sweep is refused, never half-answered.
SWEPT_MARK = Statement(
    "SWEPT_MARK",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
RETURN d.history_swept_revision AS history_swept_revision,
       d.history_swept_before AS history_swept_before
""",
)

# The revision current at transaction time ``$known_at`` (null: none yet).
REVISION_AT = Statement(
    "REVISION_AT",
    """
MATCH (r:DocumentRevision {scope_key: $scope_key, document_id: $id})
WHERE r.created_at <= $known_at
RETURN max(r.revision) AS revision
""",
)

# Every chunk of revision ``$revision`` in reading order: current chunks that began at or
# before it, and closed versions whose range holds it.
READ_REVISION_CHUNKS = Statement(
    "READ_REVISION_CHUNKS",
    """CYPHER 25
CALL () {
  MATCH (c:Chunk {scope_key: $scope_key, document_id: $id})
  WHERE c.index IS NOT NULL AND coalesce(c.from_revision, 1) <= $revision
  OPTIONAL MATCH (p:Chunk {scope_key: $scope_key})-[:HAS_CHILD]->(c)
  WHERE p.index IS NOT NULL
  RETURN c """
    + _VERSION_FIELDS
    + """ AS chunk, p.id AS parent_id,
         CASE WHEN $embeddings THEN c.embedding END AS embedding
  UNION ALL
  MATCH (c:ChunkVersion {scope_key: $scope_key, document_id: $id})
  WHERE c.from_revision <= $revision AND c.to_revision > $revision
  RETURN c """
    + _VERSION_FIELDS
    + """ AS chunk, c.parent_id AS parent_id,
         CASE WHEN $embeddings THEN c.embedding END AS embedding
}
RETURN chunk, parent_id, embedding
ORDER BY coalesce(chunk.seq, (chunk.index + 1) * $gap)
""",
)
