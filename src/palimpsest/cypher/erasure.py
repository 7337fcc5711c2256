"""Erasure: the durable job record and the bounded deletion batches (docs/spec.md, Erasure
and export).

Each batch deletes at most ``$batch`` rows of one label in one scope, so a large erasure is
many small transactions. The job (``:Erasure``, in the tenant scope) is locked first in every
batch's transaction and its counters are added in the same transaction as the deletion, so
counts stay exact across crashes and two runners of one job never interleave.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import DROP_PAIRS_OF_F

_COUNTERS: LiteralString = """entries: 0, documents: 0, chunks: 0, entities: 0, facts: 0,
  fact_sources: 0, sql_databases: 0, sql_bytes: 0, spans: 0, chunk_revisions: 0,
  document_revisions: 0, note_versions: 0"""

_JOB: LiteralString = """
RETURN e {.id, .kind, .target_scope, .status, .requested_by, .requested_at, .finished_at,
          .attempts, .user_id, .sql_erasing, .entries, .documents, .chunks, .entities, .facts,
          .fact_sources, .sql_databases, .sql_bytes, .spans, .chunk_revisions,
          .document_revisions, .note_versions, .matched} AS job,
       e {.authored_policy, .unattributed, .authored_deleted, .authored_anonymised} AS authored
"""

# One running job per target: ``active_key`` is unique while set and removed when done, so a
# second request (or a restart) for the same target resumes the running job.
OPEN_JOB = Statement(
    "OPEN_JOB",
    """
MERGE (e:Erasure {scope_key: $scope_key, active_key: $active_key})
ON CREATE SET e += {"""
    + _COUNTERS
    + """}, e.id = $id, e.tenant_id = $tenant_id, e.scope = $scope, e.owner_id = $owner_id,
              e.kind = $kind, e.target_scope = $target_scope, e.user_id = $user_id,
              e.requested_by = $requested_by, e.requested_at = $now, e.status = $running,
              e.attempts = 0, e.matched = false
SET e.attempts = e.attempts + 1, e.touched_at = $now
"""
    + _JOB,
)

# Taking the job's write lock first serialises every batch of one job.
LOCK_JOB = Statement(
    "LOCK_JOB",
    """
MATCH (e:Erasure {scope_key: $scope_key, id: $id})
SET e.touched_at = $now
"""
    + _JOB,
)

# ``matched``: some batch found a row of the target (counted or only scrubbed), so a receipt
# can tell an erasure of nothing (an id that names nobody) from one that removed something.
ADD_COUNTS = Statement(
    "ADD_COUNTS",
    """
MATCH (e:Erasure {scope_key: $scope_key, id: $id})
SET e.entries = e.entries + $add.entries, e.documents = e.documents + $add.documents,
    e.chunks = e.chunks + $add.chunks, e.entities = e.entities + $add.entities,
    e.facts = e.facts + $add.facts, e.fact_sources = e.fact_sources + $add.fact_sources,
    e.sql_databases = e.sql_databases + $add.sql_databases,
    e.sql_bytes = e.sql_bytes + $add.sql_bytes, e.spans = e.spans + $add.spans,
    e.chunk_revisions = coalesce(e.chunk_revisions, 0) + $add.chunk_revisions,
    e.document_revisions = coalesce(e.document_revisions, 0) + $add.document_revisions,
    e.note_versions = coalesce(e.note_versions, 0) + $add.note_versions,
    e.sql_erasing = coalesce($sql_erasing, e.sql_erasing),
    e.matched = coalesce(e.matched, false) OR $touched > 0
""",
)

# Done: the record keeps counts, who asked and when; nothing that names the target.
FINISH_JOB = Statement(
    "FINISH_JOB",
    """
MATCH (e:Erasure {scope_key: $scope_key, id: $id})
SET e.status = $done, e.finished_at = coalesce(e.finished_at, $now)
REMOVE e.active_key, e.user_id, e.sql_erasing
"""
    + _JOB,
)

GET_JOB = Statement(
    "GET_JOB",
    """
MATCH (e:Erasure {scope_key: $scope_key, id: $id})
"""
    + _JOB,
)

FIND_RUNNING_JOB = Statement(
    "FIND_RUNNING_JOB",
    """
MATCH (e:Erasure {scope_key: $scope_key, active_key: $active_key})
"""
    + _JOB,
)

LIST_JOBS = Statement(
    "LIST_JOBS",
    """
MATCH (e:Erasure {scope_key: $scope_key})
WHERE $before IS NULL OR e.requested_at < $before_at
   OR (e.requested_at = $before_at AND e.id < $before)
WITH e ORDER BY e.requested_at DESC, e.id DESC LIMIT $limit
"""
    + _JOB,
)

# -- one person's scope: every label, a bounded batch at a time -------------------------

ERASE_MEMORY = Statement(
    "ERASE_MEMORY",
    """
MATCH (m:Memory {scope_key: $scope_key})
WITH m LIMIT $batch
DETACH DELETE m
RETURN count(*) AS rows, count(*) AS counted
""",
)

# Every past version and tombstone of the scope's notes (cypher/note_versions.py).
ERASE_MEMORY_VERSIONS = Statement(
    "ERASE_MEMORY_VERSIONS",
    """
MATCH (v:MemoryVersion {scope_key: $scope_key})
WITH v LIMIT $batch
DELETE v
RETURN count(*) AS rows, count(*) AS counted
""",
)

ERASE_SOURCES = Statement(
    "ERASE_SOURCES",
    """
MATCH (x:Source {scope_key: $scope_key})
WITH x LIMIT $batch
DELETE x
RETURN count(*) AS rows, count(*) AS counted
""",
)

# The pairs of close facts a judge was asked about (cypher/conflicts.py): the model's
# reasons may quote the facts.
ERASE_FACT_PAIRS = Statement(
    "ERASE_FACT_PAIRS",
    """
MATCH (p:FactPair {scope_key: $scope_key})
WITH p LIMIT $batch
DELETE p
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

ERASE_FACTS = Statement(
    "ERASE_FACTS",
    """
MATCH ()-[f:FACT {scope_key: $scope_key}]->()
WITH f LIMIT $batch
DELETE f
RETURN count(*) AS rows, count(*) AS counted
""",
)

ERASE_ENTITIES = Statement(
    "ERASE_ENTITIES",
    """
MATCH (e:Entity {scope_key: $scope_key})
WITH e LIMIT $batch
DETACH DELETE e
RETURN count(*) AS rows, count(*) AS counted
""",
)

# An entity a merge set aside keeps its names until its merge is undone; it goes with the
# scope, counted as the entity it was.
ERASE_MERGED_ENTITIES = Statement(
    "ERASE_MERGED_ENTITIES",
    """
MATCH (e:MergedEntity {scope_key: $scope_key})
WITH e LIMIT $batch
DETACH DELETE e
RETURN count(*) AS rows, count(*) AS counted
""",
)

# Merge records carry the merged names (``added_aliases``).
ERASE_ENTITY_MERGES = Statement(
    "ERASE_ENTITY_MERGES",
    """
MATCH (r:EntityMerge {scope_key: $scope_key})
WITH r LIMIT $batch
DELETE r
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

# A document's root chunk holds no text; like deleteDocument, only real chunks are counted.
ERASE_CHUNKS = Statement(
    "ERASE_CHUNKS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WITH c LIMIT $batch
WITH c, c.index IS NOT NULL AS counted
DETACH DELETE c
RETURN count(*) AS rows, sum(CASE WHEN counted THEN 1 ELSE 0 END) AS counted
""",
)

# Every closed version of every chunk and every revision record: only erasure destroys them.
ERASE_CHUNK_VERSIONS = Statement(
    "ERASE_CHUNK_VERSIONS",
    """
MATCH (c:ChunkVersion {scope_key: $scope_key})
WITH c LIMIT $batch
DETACH DELETE c
RETURN count(*) AS rows, count(*) AS counted
""",
)

# A long chunk's passages (cypher/passages.py): derived from its text, so not counted.
ERASE_PASSAGES = Statement(
    "ERASE_PASSAGES",
    """
MATCH (p:Passage {scope_key: $scope_key})
WITH p LIMIT $batch
DELETE p
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

ERASE_DOCUMENT_REVISIONS = Statement(
    "ERASE_DOCUMENT_REVISIONS",
    """
MATCH (r:DocumentRevision {scope_key: $scope_key})
WITH r LIMIT $batch
DETACH DELETE r
RETURN count(*) AS rows, count(*) AS counted
""",
)

ERASE_DOCUMENTS = Statement(
    "ERASE_DOCUMENTS",
    """
MATCH (d:Document {scope_key: $scope_key})
WITH d LIMIT $batch
DETACH DELETE d
RETURN count(*) AS rows, count(*) AS counted
""",
)

# Queued, leased and dead-letter spans alike.
ERASE_SPANS = Statement(
    "ERASE_SPANS",
    """
MATCH (p:PendingSpan {scope_key: $scope_key})
WITH p LIMIT $batch
DETACH DELETE p
RETURN count(*) AS rows, count(*) AS counted
""",
)

# Derived from the rows above (their words as terms): the scope's statistics go with them.
ERASE_TERM_STATS = Statement(
    "ERASE_TERM_STATS",
    """
MATCH (s:TermStats {scope_key: $scope_key})
WITH s LIMIT $batch
DELETE s
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

ERASE_SCOPE_RECORD = Statement(
    "ERASE_SCOPE_RECORD",
    """
MATCH (s:Scope {scope_key: $scope_key})
DETACH DELETE s
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

# What a pass left behind (rows written meanwhile); zero ends the job.
PERSON_LEFT = Statement(
    "PERSON_LEFT",
    """
RETURN COUNT { MATCH (x:Source {scope_key: $scope_key}) }
     + COUNT { MATCH ()-[f:FACT {scope_key: $scope_key}]->() }
     + COUNT { MATCH (p:FactPair {scope_key: $scope_key}) }
     + COUNT { MATCH (e:Entity {scope_key: $scope_key}) }
     + COUNT { MATCH (e:MergedEntity {scope_key: $scope_key}) }
     + COUNT { MATCH (r:EntityMerge {scope_key: $scope_key}) }
     + COUNT { MATCH (c:Chunk {scope_key: $scope_key}) }
     + COUNT { MATCH (v:ChunkVersion {scope_key: $scope_key}) }
     + COUNT { MATCH (p:Passage {scope_key: $scope_key}) }
     + COUNT { MATCH (d:Document {scope_key: $scope_key}) }
     + COUNT { MATCH (r:DocumentRevision {scope_key: $scope_key}) }
     + COUNT { MATCH (m:Memory {scope_key: $scope_key}) }
     + COUNT { MATCH (v:MemoryVersion {scope_key: $scope_key}) }
     + COUNT { MATCH (p:PendingSpan {scope_key: $scope_key}) }
     + COUNT { MATCH (t:TermStats {scope_key: $scope_key}) }
     + COUNT { MATCH (s:Scope {scope_key: $scope_key}) } AS left
""",
)

TENANT_LEFT = Statement(
    "TENANT_LEFT",
    """
RETURN COUNT { MATCH (x:Source {scope_key: $scope_key, origin_key: $person_key}) }
     + COUNT { MATCH ()-[f:FACT {scope_key: $scope_key, writer_key: $person_key}]->() }
     + COUNT { MATCH ()-[f:FACT {scope_key: $scope_key, co_written: true}]->()
               WHERE $person_key IN f.co_writer_keys } AS left
""",
)

# -- the person's share of the tenant scope ---------------------------------------------

# Facts the person wrote without a source belong to them (facts with sources go with their
# last source instead, see cypher/facts.py REMOVE_SOURCES), unless others asserted them too.
ERASE_WRITER_FACTS = Statement(
    "ERASE_WRITER_FACTS",
    """
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, writer_key: $writer_key}]->(o:Entity)
WHERE NOT EXISTS { MATCH (x:Source {scope_key: $scope_key, fact_id: f.id}) }
  AND f.co_written IS NULL
WITH f, s.id AS sid, o.id AS oid LIMIT $batch
WITH f, sid, oid, CASE WHEN f.ft_len IS NULL THEN null
                       ELSE {ft: f.ft, ft_tf: f.ft_tf, speaker: f.speaker} END AS indexed
"""
    + DROP_PAIRS_OF_F
    + """DELETE f
RETURN count(*) AS facts, collect(DISTINCT sid) + collect(DISTINCT oid) AS entity_ids,
       collect(indexed) AS indexed
""",
)

# Tenant facts the person wrote that others still attest stay, without the person's key and
# run identifiers; one that others also asserted without a source passes to the first of them.
SCRUB_WRITER_FACTS = Statement(
    "SCRUB_WRITER_FACTS",
    """
MATCH ()-[f:FACT {scope_key: $scope_key, writer_key: $writer_key}]->()
WITH f, coalesce(f.co_writer_keys, []) AS others LIMIT $batch
SET f.writer_key = head(others), f.session_id = null, f.run_id = null, f.writer_id = '',
    f.co_writer_keys = CASE WHEN size(others) > 1 THEN tail(others) END,
    f.co_written = CASE WHEN size(others) > 1 THEN true END
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

# The person stops being one of the asserters of facts others wrote; the facts stay theirs.
SCRUB_CO_WRITER = Statement(
    "SCRUB_CO_WRITER",
    """
MATCH ()-[f:FACT {scope_key: $scope_key, co_written: true}]->()
WHERE $writer_key IN f.co_writer_keys
WITH f, [k IN f.co_writer_keys WHERE k <> $writer_key] AS others LIMIT $batch
SET f.co_writer_keys = CASE WHEN size(others) > 0 THEN others END,
    f.co_written = CASE WHEN size(others) > 0 THEN true END
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

# Erasure records the person asked for keep their counts but no longer name them.
SCRUB_REQUESTER = Statement(
    "SCRUB_REQUESTER",
    """
MATCH (e:Erasure {scope_key: $scope_key})
WHERE e.requested_by = $user_id
WITH e LIMIT $batch
SET e.requested_by = $erased
RETURN count(*) AS rows, 0 * count(*) AS counted
""",
)

# -- one subject in one scope -------------------------------------------------------------

FIND_SUBJECT = Statement(
    "FIND_SUBJECT",
    """
MATCH (e:Entity {scope_key: $scope_key, type: $type, normalized_name: $name})
RETURN e.id AS id
""",
)

# The subject's facts in either direction, with their sources; the other ends are returned
# so the ones left with nothing can go too.
ERASE_SUBJECT_FACTS = Statement(
    "ERASE_SUBJECT_FACTS",
    """
MATCH (e:Entity {scope_key: $scope_key, id: $id})-[f:FACT {scope_key: $scope_key}]-(other)
WITH DISTINCT f, other.id AS other_id LIMIT $batch
OPTIONAL MATCH (x:Source {scope_key: $scope_key, fact_id: f.id})
WITH f, other_id, collect(x) AS xs,
     CASE WHEN f.ft_len IS NULL THEN null
          ELSE {ft: f.ft, ft_tf: f.ft_tf, speaker: f.speaker} END AS indexed
FOREACH (x IN xs | DELETE x)
"""
    + DROP_PAIRS_OF_F
    + """DELETE f
RETURN count(*) AS facts, sum(size(xs)) AS sources, collect(DISTINCT other_id) AS entity_ids,
       collect(indexed) AS indexed
""",
)

# With the entity go the spellings merged into it and the records of those merges, which
# name them.
ERASE_SUBJECT = Statement(
    "ERASE_SUBJECT",
    """
MATCH (e:Entity {scope_key: $scope_key, id: $id})
OPTIONAL MATCH (m:MergedEntity {scope_key: $scope_key, merged_into: $id})
OPTIONAL MATCH (r:EntityMerge {scope_key: $scope_key})
  WHERE r.keep_id = $id OR $id IN r.merged_ids
WITH e, collect(DISTINCT m) AS merged, collect(DISTINCT r) AS records
FOREACH (x IN merged | DETACH DELETE x)
FOREACH (x IN records | DELETE x)
DETACH DELETE e
WITH 1 + size(merged) AS erased
RETURN sum(erased) AS entities
""",
)
