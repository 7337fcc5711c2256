"""Key/value plane: ``:Memory`` rows, unique on ``(scope_key, key)``.

Every statement filters on ``$scope_key``. Expiry is decided against ``$now`` (passed in,
so one request sees one clock) rather than the server's ``datetime()``.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.note_versions import ARCHIVE_STATE
from palimpsest.cypher.quotas import BOUNDS, RAISE, RAISE_COMPUTED
from palimpsest.cypher.terms import APPLY_CHANGES, APPLY_TERMS, PRUNE_CHANGES

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

# A note's term statistics change when it replaces ``old`` (bound, or null) with the row
# ``$ft``/``$ft_tf`` describe, as ``term_index.replaced`` computes it in Python
# (``StatsDelta``): the kind's totals row (rows and length), each term whose count changes
# or whose peak the new row raises (a peak the replaced row already held at least as high is
# left out), and the speakers; sorted by kind and term, the order every writer locks them in.
# ``before``: the replaced row had a representation (``ft_len``); one without counts as none.
_REPLACED_CHANGES: LiteralString = """
WITH *, before AND old.ft <> '' AND old.ft_tf IS NOT NULL AS had,
     $ft <> '' AND $ft_tf IS NOT NULL AS has
WITH *, CASE WHEN had THEN split(old.ft, $blank) ELSE [] END AS ot,
     CASE WHEN had THEN old.ft_tf ELSE [] END AS otf,
     CASE WHEN has THEN split($ft, $blank) ELSE [] END AS nt,
     CASE WHEN has THEN $ft_tf ELSE [] END AS ntf
WITH *, [i IN range(0, size(otf) - 1) | [ot[i], otf[i]]] AS ob,
     [i IN range(0, size(ntf) - 1) | [nt[i], ntf[i]]] AS nb
WITH *, reduce(x = 0, p IN ob | x + p[1]) AS ol, reduce(x = 0, p IN nb | x + p[1]) AS nl
WITH *, (1 - CASE WHEN before THEN 1 ELSE 0 END) AS rows,
     nl - CASE WHEN before THEN ol ELSE 0 END AS grown
WITH *, COLLECT {
  UNWIND [p IN ob | {t: p[0], o: p[1], n: 0}] + [p IN nb | {t: p[0], o: 0, n: p[1]}] AS p
  WITH p.t AS t, sum(p.o) AS o, sum(p.n) AS n
  WITH t, o, n,
       CASE WHEN n > 0 THEN 1 ELSE 0 END - CASE WHEN o > 0 THEN 1 ELSE 0 END AS df,
       n > 0 AND NOT (ol > 0 AND o >= n AND toFloat(o) / ol >= toFloat(n) / nl) AS peak
  WHERE df <> 0 OR peak
  RETURN {kind: $kind, term: t, df: df, len: 0, max_tf: CASE WHEN peak THEN n ELSE 0 END,
          max_ratio: CASE WHEN peak THEN toFloat(n) / nl ELSE 0.0 END} AS c
  UNION ALL
  WITH rows, grown WHERE rows <> 0 OR grown <> 0
  RETURN {kind: $kind, term: $totals, df: rows, len: grown, max_tf: 0, max_ratio: 0.0} AS c
  UNION ALL
  UNWIND [x IN [[CASE WHEN before THEN old.speaker END, -1], [$speaker, 1]]
          WHERE x[0] IS NOT NULL AND x[0] <> ''] AS x
  WITH x[0] AS speaker, sum(x[1]) AS n
  WHERE n <> 0
  RETURN {kind: $speaker_kind, term: speaker, df: n, len: 0, max_tf: 0, max_ratio: 0.0} AS c
} AS found
WITH *, COLLECT { UNWIND found AS c RETURN c ORDER BY c.kind, c.term } AS changes
"""

# A key/value ``set`` in one statement when nothing needs the resolver: the scope's lock (a
# parameter's write first, as ``LOCK_SCOPE_READ_ENTRY``), then the checks the resolver makes
# on that statement's row, here as a conditional write: the clock is after the key's last
# version (no tick to add), the scope's byte bound and version counter are known and leave
# room under ``$quota`` and ``$max_versions`` (0: none), and the quota counters are known and
# fit. When they hold, ``WRITE_MEMORY``'s steps run in its order (an open tombstone ends, the
# stored node is archived, the note written, its term statistics changed, the counters
# raised) and the note is returned; when one does not, nothing but the lock is written and no
# row comes back: the resolver then takes the two statements, which count or refuse.
SET_MEMORY = Statement(
    "SET_MEMORY",
    """CYPHER 25
MERGE (s:Scope {scope_key: $scope_key})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.created_at = $now
SET s.touched_at = $now
WITH s
OPTIONAL MATCH (old:Memory {scope_key: $scope_key, key: $key})
WITH s, old, COLLECT { MATCH (v:MemoryVersion {scope_key: $scope_key, key: $key})
                       WHERE v.created_at IS NOT NULL
                       RETURN v ORDER BY v.created_at DESC LIMIT 1 } AS last
WITH s, old, last[0] AS last, old IS NOT NULL AS stored, old.ft_len IS NOT NULL AS before,
     old IS NOT NULL AND (old.expires_at IS NULL OR old.expires_at > $now) AS live,
     s.memory_bytes - coalesce(old.bytes, 0) AS others
WITH s, old, last, stored, before, others + $bytes AS memory_bytes,
     CASE WHEN $pin IS NULL THEN live AND coalesce(old.pinned, false) ELSE $pin END AS pin,
     all(t IN [old.updated_at, last.created_at] WHERE t IS NULL OR $now > t) AS after_last,
     CASE WHEN stored THEN s.note_versions + 1 END AS note_versions,
     NOT stored AND last IS NOT NULL AND last.expired_at IS NULL AS close_tombstone,
     [c IN [{counter: $notes_counter, n: CASE WHEN stored THEN 0 ELSE 1 END,
             limit: $notes_limit},
            {counter: $versions_counter, n: CASE WHEN stored THEN 1 ELSE 0 END,
             limit: $versions_limit}] WHERE c.n > 0] AS added
WHERE after_last
  AND ($quota = 0 OR (memory_bytes IS NOT NULL AND memory_bytes <= $quota))
  AND (NOT stored OR (note_versions IS NOT NULL
                      AND ($max_versions = 0 OR note_versions <= $max_versions)))
  AND all(c IN added WHERE s[c.counter] IS NOT NULL
                       AND (c.limit = 0 OR s[c.counter] + c.n <= c.limit))"""
    + _REPLACED_CHANGES
    + """WITH s, stored, note_versions, close_tombstone, memory_bytes, added, changes,
     [c IN changes WHERE c.df < 0 | {kind: c.kind, term: c.term}] AS pruned,
     CASE WHEN pin THEN true END AS pinned
CALL (close_tombstone) {
  MATCH (v:MemoryVersion {scope_key: $scope_key, key: $key})
  WHERE close_tombstone AND v.deleted AND v.expired_at IS NULL
  SET v.expired_at = $now
}
CALL (s, stored, note_versions) {
  MATCH (m:Memory {scope_key: $scope_key, key: $key})
  WHERE stored
"""
    + ARCHIVE_STATE
    + """  SET s.note_versions = note_versions
}"""
    + _UPSERT.replace("$pinned", "pinned")
    + """SET s.memory_bytes = memory_bytes
WITH s, m, added, changes, pruned
CALL (changes) {
  UNWIND changes AS d"""
    + APPLY_TERMS
    + """}
CALL (pruned) {"""
    + PRUNE_CHANGES.replace("$pruned", "pruned")
    + """}
WITH s, m, added"""
    + RAISE_COMPUTED
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
