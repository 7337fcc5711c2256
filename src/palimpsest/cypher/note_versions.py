"""Past versions of key/value notes (docs/decisions/0007-note-versions.md).

The current version of a key stays its ``:Memory`` node, so present reads, recall and the
indexes never see the past. Each replaced state is a ``:MemoryVersion`` node of the same scope
and key (no relationship: the key links them), outside the vector and full-text indexes.
A version holds every property its ``:Memory`` node had, renamed for transaction time:
``created_at`` (when it became the current state, the node's ``updated_at``),
``expired_at`` (when it stopped being: the next write, or its TTL if that came first) and
``entry_created_at`` (the key's own ``created_at`` then). A tombstone is a version with
``deleted: true`` and no value; while the key stays deleted its ``expired_at`` is null.

A key's versions are ordered by ``created_at``, strictly increasing: writers of one scope
hold its lock, and the resolver never stamps a write earlier than the key's last one.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement

COUNT_VERSIONS = Statement(
    "COUNT_VERSIONS",
    """
RETURN COUNT { MATCH (v:MemoryVersion {scope_key: $scope_key}) } AS versions
""",
)

# The current node becomes a past version: it ends at ``$now``, or at its expiry if that came
# first (TTL ends a version, it does not erase it).
# A fragment (the current node bound as ``m``), so a write can archive in its own statement
# (cypher/memory.py ``WRITE_MEMORY``).
ARCHIVE_STATE: LiteralString = """CREATE (v:MemoryVersion)
SET v = properties(m)
SET v.id = $id, v.created_at = m.updated_at, v.entry_created_at = m.created_at, v.deleted = false,
    v.expired_at = CASE WHEN m.expires_at IS NOT NULL AND m.expires_at < $now
                        THEN m.expires_at ELSE $now END
REMOVE v.updated_at
"""

ARCHIVE_CURRENT = Statement(
    "ARCHIVE_CURRENT",
    """
MATCH (m:Memory {scope_key: $scope_key, key: $key})
"""
    + ARCHIVE_STATE
    + """WITH v
MATCH (s:Scope {scope_key: $scope_key})
SET s.note_versions = $note_versions
RETURN count(v) AS archived
""",
)

CLOSE_TOMBSTONE = Statement(
    "CLOSE_TOMBSTONE",
    """
MATCH (v:MemoryVersion {scope_key: $scope_key, key: $key})
WHERE v.deleted AND v.expired_at IS NULL
SET v.expired_at = $now
RETURN count(v) AS closed
""",
)

WRITE_TOMBSTONE = Statement(
    "WRITE_TOMBSTONE",
    """
CREATE (v:MemoryVersion {scope_key: $scope_key, key: $key})
SET v.id = $tombstone_id, v.tenant_id = $tenant_id, v.scope = $scope, v.owner_id = $owner_id,
    v.deleted = true,
    v.created_at = $now, v.session_id = $session_id, v.run_id = $run_id,
    v.agent_name = $agent_name, v.model = $model, v.origin = $origin,
    v.writer_id = $writer_id, v.writer_key = $writer_key
WITH v
MATCH (s:Scope {scope_key: $scope_key})
SET s.note_versions = $note_versions
RETURN count(v) AS written
""",
)

_WRITER: LiteralString = """.tenant_id, .session_id, .run_id, .agent_name, .model, .origin,
.writer_id, .compaction_generation"""

# One state of a key as a map with the columns of a current read (cypher/memory.py ``ENTRY``).
_CURRENT_STATE: LiteralString = (
    """m {.key, .value, .expires_at, .created_at, .updated_at, .observed_at, .valid_at,
.invalid_at, .pinned, embedded: m.embedding IS NOT NULL, """
    + _WRITER
    + "}"
)
_PAST_STATE: LiteralString = (
    """v {.key, .value, .expires_at, created_at: v.entry_created_at, updated_at: v.created_at,
.observed_at, .valid_at, .invalid_at, .pinned, embedded: v.embedding IS NOT NULL, """
    + _WRITER
    + "}"
)
# What a key held at transaction time ``$known_at``: its current node if written by then and
# not expired then, else the past version (not a tombstone) that was current then.
_KNOWN_CURRENT: LiteralString = """m.updated_at <= $known_at
  AND (m.expires_at IS NULL OR m.expires_at > $known_at)"""
_KNOWN_PAST: LiteralString = """v.created_at <= $known_at AND v.expired_at > $known_at
  AND NOT v.deleted"""
_VALID: LiteralString = """((n.valid_at IS NULL OR n.valid_at <= $as_of)
  AND (n.invalid_at IS NULL OR n.invalid_at > $as_of))"""
_STATE_COLUMNS: LiteralString = """
RETURN n.key AS key, n.value AS value, n.expires_at AS expires_at, n.created_at AS created_at,
n.updated_at AS updated_at, n.embedded AS embedded, n.observed_at AS observed_at,
n.valid_at AS valid_at, n.invalid_at AS invalid_at, n.tenant_id AS tenant_id,
n.session_id AS session_id, n.run_id AS run_id, n.agent_name AS agent_name, n.model AS model,
n.origin AS origin, n.writer_id AS writer_id, n.compaction_generation AS compaction_generation,
coalesce(n.pinned, false) AS pinned
"""


def _known_states(
    current: LiteralString, past: LiteralString, tail: LiteralString
) -> LiteralString:
    """The states keys held at transaction time ``$known_at`` and valid at ``$as_of``, as
    ``_STATE_COLUMNS``: ``current`` matches ``m`` (its pattern and the start of its WHERE),
    ``past`` matches ``v`` the same way; ``tail`` orders and limits."""
    return (
        """CYPHER 25
CALL () {
  """
        + current
        + _KNOWN_CURRENT
        + """
  RETURN """
        + _CURRENT_STATE
        + """ AS n
  UNION ALL
  """
        + past
        + _KNOWN_PAST
        + """
  RETURN """
        + _PAST_STATE
        + """ AS n
}
WITH n WHERE """
        + _VALID
        + _STATE_COLUMNS
        + tail
    )


GET_MEMORY_KNOWN = Statement(
    "GET_MEMORY_KNOWN",
    _known_states(
        """MATCH (m:Memory {scope_key: $scope_key, key: $key})
  WHERE """,
        """MATCH (v:MemoryVersion {scope_key: $scope_key, key: $key})
  WHERE """,
        "LIMIT 1",
    ),
)

LIST_MEMORY_KNOWN = Statement(
    "LIST_MEMORY_KNOWN",
    _known_states(
        """MATCH (m:Memory {scope_key: $scope_key})
  WHERE m.key STARTS WITH $prefix AND m.key > $after AND """,
        """MATCH (v:MemoryVersion {scope_key: $scope_key})
  WHERE v.key STARTS WITH $prefix AND v.key > $after AND """,
        """ORDER BY key
LIMIT $limit""",
    ),
)

_HISTORY_COLUMNS: LiteralString = (
    """, .value, .valid_at, .invalid_at, .expires_at, .pinned, """ + _WRITER
)

# A key's versions, newest first: the current node (if any) and every past one. The current
# node's ``expired_at`` is its expiry once that has passed.
MEMORY_HISTORY = Statement(
    "MEMORY_HISTORY",
    """CYPHER 25
CALL () {
  MATCH (m:Memory {scope_key: $scope_key, key: $key})
  RETURN m {created_at: m.updated_at, deleted: false,
            expired_at: CASE WHEN m.expires_at <= $now THEN m.expires_at END"""
    + _HISTORY_COLUMNS
    + """} AS n
  UNION ALL
  MATCH (v:MemoryVersion {scope_key: $scope_key, key: $key})
  WHERE v.created_at IS NOT NULL
  RETURN v {.created_at, .deleted, .expired_at"""
    + _HISTORY_COLUMNS
    + """} AS n
}
WITH n WHERE $after IS NULL OR n.created_at < $after
RETURN n.created_at AS created_at, n.expired_at AS expired_at, n.deleted AS deleted,
       n.value AS value, n.valid_at AS valid_at, n.invalid_at AS invalid_at,
       n.expires_at AS expires_at, n.tenant_id AS tenant_id, n.session_id AS session_id,
       n.run_id AS run_id, n.agent_name AS agent_name, n.model AS model, n.origin AS origin,
       n.writer_id AS writer_id, n.compaction_generation AS compaction_generation,
       coalesce(n.pinned, false) AS pinned
ORDER BY created_at DESC
LIMIT $limit""",
)

# The pinned notes of a scope as known at ``$known_at`` and valid at ``$as_of`` (``context``).
PINNED_NOTES_KNOWN = Statement(
    "PINNED_NOTES_KNOWN",
    _known_states(
        """MATCH (m:Memory {scope_key: $scope_key})
  WHERE m.pinned = true AND """,
        """MATCH (v:MemoryVersion {scope_key: $scope_key})
  WHERE v.pinned = true AND """,
        """ORDER BY created_at, key
LIMIT $limit""",
    ),
)

# -- recall over the past (resolvers/recall/past.py) --------------------------------------
# The notes of a scope as known at ``$known_at``: no index holds past versions, so these read
# the scope's notes and versions by ``scope_key`` and score them exactly (the past may cost
# more, never the present).
_KNOWN_NOTES: LiteralString = (
    """CYPHER 25
CALL () {
  MATCH (m:Memory {scope_key: $scope_key})
  WHERE """
    + _KNOWN_CURRENT
    + """
  RETURN m AS n, m.created_at AS first_at
  UNION ALL
  MATCH (v:MemoryVersion {scope_key: $scope_key})
  WHERE """
    + _KNOWN_PAST
    + """
  RETURN v AS n, v.entry_created_at AS first_at
}
"""
)
_PAST_LIVE: LiteralString = "n.key STARTS WITH $prefix AND ($include_retired OR " + _VALID + ")"
_PAST_UNTIMELY: LiteralString = (
    "collect(coalesce(n.key STARTS WITH $prefix AND NOT ($include_retired OR "
    + _VALID
    + "), false)) AS untimely"
)
_PAST_CUES: LiteralString = """collect([n.observed_at.epochMillis, n.years,
  coalesce(n.has_time, false), n.speaker,
  (n.valid_at IS NOT NULL OR n.invalid_at IS NOT NULL)]) AS cues"""

PAST_VECTOR_MEMORY = Statement(
    "PAST_VECTOR_MEMORY",
    _KNOWN_NOTES
    + """WITH n WHERE n.embedding IS NOT NULL AND n.scope_key = $scope_key
WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
ORDER BY score DESC, n.key
LIMIT $k
RETURN collect(n.key) AS ids, collect(score) AS scores,
       collect(coalesce("""
    + _PAST_LIVE
    + """, false)) AS live, """
    + _PAST_UNTIMELY
    + ", "
    + _PAST_CUES,
)

PAST_TERMS_MEMORY = Statement(
    "PAST_TERMS_MEMORY",
    _KNOWN_NOTES
    + """WITH n WHERE n.scope_key = $scope_key AND n.ft IS NOT NULL
  AND any(t IN split(n.ft, $space) WHERE t IN $terms)
RETURN collect(n.key) AS ids, collect(coalesce(n.ft_len, 0)) AS lens,
       collect(coalesce("""
    + _PAST_LIVE
    + """, false)) AS live, collect(n.ft) AS ft, collect(coalesce(n.ft_tf, [])) AS tf, """
    + _PAST_UNTIMELY
    + ", "
    + _PAST_CUES,
)

PAST_LOAD_NOTES = Statement(
    "PAST_LOAD_NOTES",
    _KNOWN_NOTES
    + """WITH n, first_at WHERE n.key IN $notes AND n.scope_key = $scope_key
RETURN collect(n {.key, .scope, .text, created_at: first_at, .observed_at, .tenant_id,
                  .session_id, .run_id, .agent_name, .model, .origin, .writer_id,
                  .compaction_generation}) AS notes""",
)
