"""Key/value plane: ``:Memory`` rows, unique on ``(scope_key, key)``.

Every statement filters on ``$scope_key``. Expiry is decided against ``$now`` (passed in,
so one request sees one clock) rather than the server's ``datetime()``.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.note_versions import ARCHIVE_STATE
from palimpsest.cypher.quotas import BOUNDS, RAISE
from palimpsest.cypher.terms import APPLY_CHANGES, PRUNE_CHANGES

# A note's validity at ``$as_of``, read exactly like a fact's (docs/spec.md, Time); undated notes
# are always valid.
NOTE_VALID: LiteralString = """((m.valid_at IS NULL OR m.valid_at <= $as_of)
  AND (m.invalid_at IS NULL OR m.invalid_at > $as_of))"""

ENTRY: LiteralString = """
RETURN m.key AS key, m.value AS value, m.expires_at AS expires_at, m.created_at AS created_at,
m.updated_at AS updated_at, m.embedding IS NOT NULL AS embedded, m.embed_mode AS embed_mode,
m.observed_at AS observed_at, m.valid_at AS valid_at, m.invalid_at AS invalid_at,
m.tenant_id AS tenant_id, m.session_id AS session_id, m.run_id AS run_id,
m.agent_name AS agent_name, m.model AS model, m.origin AS origin, m.writer_id AS writer_id,
m.compaction_generation AS compaction_generation, coalesce(m.pinned, false) AS pinned
"""

GET_MEMORY = Statement(
    "GET_MEMORY",
    """
MATCH (m:Memory {scope_key: $scope_key, key: $key})
WHERE (m.expires_at IS NULL OR m.expires_at > $now) AND """
    + NOTE_VALID
    + ENTRY,
)

LIST_MEMORY = Statement(
    "LIST_MEMORY",
    """
MATCH (m:Memory {scope_key: $scope_key})
WHERE m.key STARTS WITH $prefix AND m.key > $after
  AND (m.expires_at IS NULL OR m.expires_at > $now) AND """
    + NOTE_VALID
    + ENTRY
    + """
ORDER BY m.key
LIMIT $limit
""",
)

# Taking the write lock on the scope's node serialises writers of one scope, so the quota
# check below and the write that follows it cannot interleave with another writer's. It also
# reads what versioning needs (cypher/note_versions.py): whether a node is stored, its time,
# and the key's newest past version ([created_at, is an open tombstone]), by the
# (scope_key, key, created_at) index.
LOCK_SCOPE_READ_ENTRY = Statement(
    "LOCK_SCOPE_READ_ENTRY",
    """
MERGE (s:Scope {scope_key: $scope_key})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.created_at = $now
SET s.touched_at = $now
WITH s
OPTIONAL MATCH (m:Memory {scope_key: $scope_key, key: $key})
WITH s, m, m IS NOT NULL AND (m.expires_at IS NULL OR m.expires_at > $now) AS live
RETURN CASE WHEN live THEN m.value END AS value,
       CASE WHEN live THEN m.expires_at END AS expires_at,
       CASE WHEN live THEN m.embed_mode END AS embed_mode,
       CASE WHEN live THEN m.text END AS text,
       CASE WHEN live THEN m.observed_at END AS observed_at,
       CASE WHEN live THEN m.valid_at END AS valid_at,
       CASE WHEN live THEN m.invalid_at END AS invalid_at,
       CASE WHEN live THEN coalesce(m.pinned, false) ELSE false END AS pinned,
       m.ft AS ft, m.ft_tf AS ft_tf, m.ft_len AS ft_len, m.speaker AS speaker,
       coalesce(m.bytes, 0) AS stored_bytes, s.memory_bytes AS memory_bytes,
       m IS NOT NULL AS stored, m.updated_at AS updated_at, s.note_versions AS note_versions,
       COLLECT { MATCH (v:MemoryVersion {scope_key: $scope_key, key: $key})
                 WHERE v.created_at IS NOT NULL
                 RETURN [v.created_at, v.expired_at IS NULL] AS last
                 ORDER BY v.created_at DESC LIMIT 1 } AS last_version
""",
)

# The quota counts live notes only, which takes reading every note of the scope. The scope
# node keeps ``memory_bytes``, the bytes of every stored note, expired ones included: an upper
# bound of the live bytes, so a write it clears needs no sum. Writers change it under the
# scope's lock; a bulk write removes it (null: unknown, summed again at the next write).
SCOPE_USAGE = Statement(
    "SCOPE_USAGE",
    """
MATCH (m:Memory {scope_key: $scope_key})
RETURN coalesce(sum(CASE WHEN m.key <> $key AND (m.expires_at IS NULL OR m.expires_at > $now)
                         THEN m.bytes END), 0) AS used,
       coalesce(sum(CASE WHEN m.key <> $key THEN m.bytes END), 0) AS others
""",
)

FORGET_MEMORY_BYTES = Statement(
    "FORGET_MEMORY_BYTES",
    """
MATCH (s:Scope {scope_key: $scope_key})
REMOVE s.memory_bytes, s.note_versions, s.quota_notes, s.quota_document_bytes, s.quota_chunks,
       s.quota_facts, s.quota_entities, s.quota_pending_spans, s.quota_versions
""",
)

_UPSERT: LiteralString = """
MERGE (m:Memory {scope_key: $scope_key, key: $key})
ON CREATE SET m.tenant_id = $tenant_id, m.scope = $scope, m.owner_id = $owner_id
SET m.created_at = CASE
      WHEN m.created_at IS NULL OR (m.expires_at IS NOT NULL AND m.expires_at <= $now)
      THEN $now ELSE m.created_at END,
    m.value = $value, m.bytes = $bytes, m.expires_at = $expires_at, m.updated_at = $now,
    m.text = $text, m.embedding = $embedding, m += coalesce($embedding_dual, {}),
    m.embed_mode = $embed_mode,
    m.ft = $ft, m.ft_tf = $ft_tf, m.ft_len = $ft_len, m.years = $years,
    m.has_time = $has_time, m.speaker = $speaker,
    m.session_id = $session_id, m.run_id = $run_id, m.agent_name = $agent_name,
    m.model = $model, m.origin = $origin, m.compaction_generation = $compaction_generation,
    m.writer_id = $writer_id, m.writer_key = $writer_key,
    m.observed_at = $observed_at, m.valid_at = $valid_at, m.invalid_at = $invalid_at,
    m.pinned = $pinned
"""

UPSERT_MEMORY = Statement(
    "UPSERT_MEMORY",
    _UPSERT
    + """WITH m
OPTIONAL MATCH (s:Scope {scope_key: $scope_key})
SET s.memory_bytes = $memory_bytes
WITH m"""
    + ENTRY,
)

# A whole key/value write in one statement, under the scope's lock (``LOCK_SCOPE_READ_ENTRY``
# ran first in the transaction, so the scope node exists): an open tombstone of the key ends
# (``$close_tombstone``), the stored node becomes a past version (``$archive``), the note is
# written, its term statistics change (``$changes`` on ``$shard``; the terms it lowered to
# nothing, ``$pruned``, go), and the scope's quota counters are raised by ``$added`` when
# they fit (resolvers/tenant/quotas.py decides otherwise). The steps run in this order, as the
# statements they replace did (``ARCHIVE_CURRENT``, ``UPSERT_MEMORY``, ``APPLY_TERM_STATS``,
# ``PRUNE_TERM_STATS``, ``RAISE_QUOTA_COUNTERS``).
WRITE_MEMORY = Statement(
    "WRITE_MEMORY",
    """CYPHER 25
MATCH (s:Scope {scope_key: $scope_key})
CALL () {
  MATCH (v:MemoryVersion {scope_key: $scope_key, key: $key})
  WHERE $close_tombstone AND v.deleted AND v.expired_at IS NULL
  SET v.expired_at = $now
}
CALL (s) {
  MATCH (m:Memory {scope_key: $scope_key, key: $key})
  WHERE $archive
"""
    + ARCHIVE_STATE
    + """  SET s.note_versions = $note_versions
}"""
    + _UPSERT
    + """SET s.memory_bytes = $memory_bytes
WITH s, m
CALL () {"""
    + APPLY_CHANGES
    + """}
CALL () {"""
    + PRUNE_CHANGES
    + """}
WITH s, m"""
    + RAISE
    + """
WITH s, m, fits"""
    + ENTRY.rstrip()
    + ", fits, "
    + BOUNDS,
)

DELETE_MEMORY = Statement(
    "DELETE_MEMORY",
    """
OPTIONAL MATCH (s:Scope {scope_key: $scope_key})
SET s.touched_at = $now
WITH s
MATCH (m:Memory {scope_key: $scope_key, key: $key})
SET s.memory_bytes = s.memory_bytes - coalesce(m.bytes, 0)
WITH m, (m.expires_at IS NULL OR m.expires_at > $now) AS live, m.ft AS ft, m.ft_tf AS ft_tf,
     m.ft_len AS ft_len, m.speaker AS speaker
DETACH DELETE m
RETURN live, ft, ft_tf, ft_len, speaker
""",
)

# The pinned notes of a scope (``context``), live and valid at ``$as_of``, oldest pin first.
# ``pinned`` is true or absent, never false, so a scope's notes are read by ``scope_key`` and
# only the pinned few are returned.
PINNED_NOTES = Statement(
    "PINNED_NOTES",
    """
MATCH (m:Memory {scope_key: $scope_key})
WHERE m.pinned = true AND (m.expires_at IS NULL OR m.expires_at > $now) AND """
    + NOTE_VALID
    + ENTRY
    + """
ORDER BY m.created_at, m.key
LIMIT $limit
""",
)
