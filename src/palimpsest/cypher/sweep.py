"""Retention sweeps (``palimpsest sweep``): the past a tenant chose not to keep, removed in
bounded batches.

The sweeper walks scopes through ``SWEEP_SCOPES``, the one statement here that reads across
scopes: it returns the ids of ``:Scope`` nodes in key order, never content, so a walk resumes
from the last key. Everything else is scoped and runs in one transaction per batch that
first takes the scope's write lock (``LOCK_SWEPT_SCOPE``, the node writers lock too), so a
batch and a writer of the same scope never interleave and the counters on ``:Scope``
(``memory_bytes``, ``note_versions``) move with the rows in the same transaction.

``history_swept_before`` on ``:Scope`` is the latest end of a past note version a sweep
removed: a ``knownAt`` before it may have read a state that is gone, and is told so.
The tenant's retention policy lives on the tenant scope's ``:Scope`` node (null: the server's
setting).
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import CrossScopeStatement, Statement
from palimpsest.cypher.quotas import PAST_VERSIONS

# Scope ids in key order after ``$after`` (of one tenant, or all with ``$tenant`` null), for
# the sweeper's walk. Ids only.
SWEEP_SCOPES = CrossScopeStatement(
    "SWEEP_SCOPES",
    """
MATCH (s:Scope)
WHERE s.scope_key > $after AND ($tenant IS NULL OR s.tenant_id = $tenant)
RETURN s.tenant_id AS tenant_id, s.scope AS scope, s.owner_id AS owner_id,
       s.scope_key AS scope_key
ORDER BY s.scope_key
LIMIT $limit
""",
)

_POLICY: LiteralString = """
RETURN s.retention_versions_seconds AS versions_seconds,
       s.retention_tombstones_seconds AS tombstones_seconds,
       s.retention_done_spans_seconds AS done_spans_seconds,
       s.history_swept_before AS history_swept_before,
       s.document_history_swept_before AS document_history_swept_before
"""

READ_RETENTION = Statement(
    "READ_RETENTION",
    """
OPTIONAL MATCH (s:Scope {scope_key: $scope_key})
"""
    + _POLICY,
)

SET_RETENTION = Statement(
    "SET_RETENTION",
    """
MERGE (s:Scope {scope_key: $scope_key})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.created_at = $now
SET s.retention_versions_seconds = $versions_seconds,
    s.retention_tombstones_seconds = $tombstones_seconds,
    s.retention_done_spans_seconds = $done_spans_seconds,
    s.retention_set_at = $now
"""
    + _POLICY,
)

# The write lock writers of the scope take too (cypher/memory.py LOCK_SCOPE_READ_ENTRY).
LOCK_SWEPT_SCOPE = Statement(
    "LOCK_SWEPT_SCOPE",
    """
MATCH (s:Scope {scope_key: $scope_key})
SET s.swept_at = $now
RETURN s.scope_key AS scope_key
""",
)

# Expired notes leave the current plane for the past: each becomes the version it already
# was in transaction time (it ended at its expiry), so nothing a ``knownAt`` read or the
# history answers changes, and the scope's bound and statistics shrink.
ARCHIVE_EXPIRED_NOTES = Statement(
    "ARCHIVE_EXPIRED_NOTES",
    """
MATCH (m:Memory {scope_key: $scope_key})
WHERE m.expires_at <= $now
WITH m ORDER BY m.expires_at, m.key LIMIT $batch
CREATE (v:MemoryVersion)
SET v = properties(m)
SET v.id = randomUUID(), v.created_at = m.updated_at, v.entry_created_at = m.created_at,
    v.deleted = false, v.expired_at = m.expires_at
REMOVE v.updated_at
WITH m, m.ft AS ft, m.ft_tf AS ft_tf, m.speaker AS speaker, coalesce(m.bytes, 0) AS bytes
DETACH DELETE m
RETURN ft, ft_tf, speaker, bytes
""",
)

DELETE_OLD_VERSIONS = Statement(
    "DELETE_OLD_VERSIONS",
    """
MATCH (v:MemoryVersion {scope_key: $scope_key})
WHERE v.expired_at < $cutoff AND NOT coalesce(v.deleted, false)
WITH v ORDER BY v.expired_at LIMIT $batch
WITH collect(v) AS gone, max(v.expired_at) AS latest
FOREACH (v IN gone | DETACH DELETE v)
RETURN size(gone) AS removed, latest
""",
)

DELETE_OLD_TOMBSTONES = Statement(
    "DELETE_OLD_TOMBSTONES",
    """
MATCH (v:MemoryVersion {scope_key: $scope_key})
WHERE v.created_at < $cutoff AND v.deleted
WITH v ORDER BY v.created_at LIMIT $batch
WITH collect(v) AS gone
FOREACH (v IN gone | DETACH DELETE v)
RETURN size(gone) AS removed, null AS latest
""",
)

# A batch's changes to the scope's counters (null stays null: unknown, recounted on demand).
COUNT_SWEPT = Statement(
    "COUNT_SWEPT",
    """
MATCH (s:Scope {scope_key: $scope_key})
SET s.memory_bytes = s.memory_bytes - $bytes,
    s.note_versions = s.note_versions + $versions,
    s.history_swept_before = CASE
      WHEN $latest IS NULL THEN s.history_swept_before
      WHEN s.history_swept_before IS NULL OR s.history_swept_before < $latest THEN $latest
      ELSE s.history_swept_before END
RETURN s.scope_key AS scope_key
""",
)

# The quotas' bounds, recomputed once a scope is swept: every stored note's bytes, and every
# version kept (resolvers/tenant/quotas.py, the versions plane).
RECOUNT_NOTES = Statement(
    "RECOUNT_NOTES",
    """
MATCH (s:Scope {scope_key: $scope_key})
SET s.memory_bytes = COLLECT { MATCH (m:Memory {scope_key: $scope_key})
                               RETURN coalesce(sum(m.bytes), 0) AS b }[0],
    s.note_versions = COUNT { MATCH (v:MemoryVersion {scope_key: $scope_key}) },
    s.quota_versions = """
    + PAST_VERSIONS
    + """
RETURN s.memory_bytes AS memory_bytes, s.note_versions AS note_versions
""",
)

DELETE_DONE_SPANS = Statement(
    "DELETE_DONE_SPANS",
    """
MATCH (p:PendingSpan {scope_key: $scope_key})
WHERE p.status = $done AND p.done_at < $cutoff
WITH p LIMIT $batch
WITH collect(p) AS gone
FOREACH (p IN gone | DETACH DELETE p)
RETURN size(gone) AS removed, null AS latest
""",
)

# Document revisions past the versions window (docs/decisions/0008-document-revisions.md).
# Revision R ended when revision R+1 was written; it is past the window when that was before
# ``$cutoff``, and the current revision never is. A document is *marked* first
# (``history_swept_revision``: revisions up to it are gone, ``history_swept_before``: when the
# last of them ended), then its closed chunk versions and revision records go. Reads check
# the mark, and the mark's SET takes the document's lock, so a revision written or restored
# under that lock never reads a half-swept past. The scope keeps the latest end it swept
# (``document_history_swept_before``), which a ``knownAt`` recall over documents checks.
MARK_SWEPT_REVISIONS = Statement(
    "MARK_SWEPT_REVISIONS",
    """
MATCH (r:DocumentRevision {scope_key: $scope_key})
WHERE r.created_at < $cutoff AND r.revision > 1
WITH r.document_id AS id, max(r.revision) AS next
MATCH (d:Document {scope_key: $scope_key, id: id})
WHERE coalesce(d.history_swept_revision, 0) < next - 1
WITH d, next ORDER BY d.id LIMIT $batch
MATCH (e:DocumentRevision {scope_key: $scope_key, document_id: d.id, revision: next})
SET d.history_swept_revision = next - 1, d.history_swept_before = e.created_at
WITH count(d) AS marked, max(e.created_at) AS latest
OPTIONAL MATCH (s:Scope {scope_key: $scope_key})
SET s.document_history_swept_before = CASE
      WHEN latest IS NULL THEN s.document_history_swept_before
      WHEN s.document_history_swept_before IS NULL OR s.document_history_swept_before < latest
        THEN latest
      ELSE s.document_history_swept_before END
RETURN marked AS removed, latest
""",
)

# A closed chunk version [from, to) belongs to revisions from..to-1: it goes once to-1 is swept.
_MARKED: LiteralString = """
MATCH (d:Document {scope_key: $scope_key})
WHERE d.history_swept_revision IS NOT NULL
"""
_GONE: LiteralString = """
WITH x LIMIT $batch
WITH collect(x) AS gone
FOREACH (x IN gone | DETACH DELETE x)
RETURN size(gone) AS removed, null AS latest
"""

DELETE_SWEPT_CHUNK_VERSIONS = Statement(
    "DELETE_SWEPT_CHUNK_VERSIONS",
    _MARKED
    + """MATCH (x:ChunkVersion {scope_key: $scope_key, document_id: d.id})
WHERE x.to_revision <= d.history_swept_revision + 1"""
    + _GONE,
)

DELETE_SWEPT_REVISIONS = Statement(
    "DELETE_SWEPT_REVISIONS",
    _MARKED
    + """MATCH (x:DocumentRevision {scope_key: $scope_key, document_id: d.id})
WHERE x.revision <= d.history_swept_revision"""
    + _GONE,
)
