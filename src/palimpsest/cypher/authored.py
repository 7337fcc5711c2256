"""What one person wrote outside their own scope, for erasure (docs/reference/authorship.md).

Every row a write stamps carries ``writer_id`` (the user; ``""`` for a token naming none) and
``writer_key`` (their USER scope key). ``AUTHORED_SCOPES`` finds the shared scopes holding
rows of one writer, by the ``*_writer`` indexes, and returns scope ids only. The batches then
run scoped, one label at a time, ``$batch`` rows each: deleting the rows (policy ``DELETE``)
or removing the fields that name the writer (``ANONYMISE``, and rows others' rows still need).
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import CrossScopeStatement, Statement

# The fields of a row that name who wrote it: removed when the author is anonymised.
_ANONYMISE: LiteralString = """SET n.writer_id = '', n.writer_key = null, n.session_id = null,
    n.run_id = null"""

# The entity ``n`` is the kept end of a merge whose set-aside entities still point at it.
_HOLDS_MERGED: LiteralString = (
    "EXISTS { MATCH (:MergedEntity {scope_key: $scope_key, merged_into: n.id}) }"
)

# Scope ids only (never content); USER scopes are their owners' and erased as a whole.
AUTHORED_SCOPES = CrossScopeStatement(
    "AUTHORED_SCOPES",
    """
CALL () {
  MATCH (n:Memory {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:MemoryVersion {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:Document {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:Chunk {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:ChunkVersion {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:DocumentRevision {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:Entity {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:MergedEntity {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH (n:EntityMerge {writer_key: $writer_key})
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
  UNION MATCH ()-[n:FACT {writer_key: $writer_key}]->()
  RETURN n.scope AS scope, n.owner_id AS owner, n.tenant_id AS tenant
}
WITH DISTINCT scope, owner, tenant WHERE scope IN $shared
RETURN scope, owner, tenant ORDER BY scope, owner
""",
)

# Under DELETE a document the person created goes whole, a bounded batch of its rows at a
# time; its chunks' index fields come back so the scope's term statistics follow.
AUTHORED_DOCUMENT = Statement(
    "AUTHORED_DOCUMENT",
    """
MATCH (d:Document {scope_key: $scope_key, writer_key: $writer_key})
RETURN d.id AS id LIMIT 1
""",
)

ERASE_DOCUMENT_ROWS = Statement(
    "ERASE_DOCUMENT_ROWS",
    """
MATCH (n {scope_key: $scope_key, document_id: $id})
WHERE n:Chunk OR n:ChunkVersion OR n:DocumentRevision OR n:Passage
WITH n LIMIT $batch
WITH n, n:Chunk AND n.index IS NOT NULL AS chunk, n:ChunkVersion AS version,
     n:DocumentRevision AS revision,
     CASE WHEN n:Chunk AND n.ft_len IS NOT NULL
          THEN {ft: n.ft, ft_tf: n.ft_tf, ft_len: n.ft_len, speaker: n.speaker} END AS indexed
DETACH DELETE n
RETURN count(*) AS rows, sum(CASE WHEN chunk THEN 1 ELSE 0 END) AS chunks,
       sum(CASE WHEN version THEN 1 ELSE 0 END) AS chunk_revisions,
       sum(CASE WHEN revision THEN 1 ELSE 0 END) AS document_revisions,
       collect(indexed) AS indexed
""",
)

ERASE_DOCUMENT_NODE = Statement(
    "ERASE_DOCUMENT_NODE",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
DETACH DELETE d
RETURN count(*) AS rows
""",
)

ERASE_AUTHORED_NOTES = Statement(
    "ERASE_AUTHORED_NOTES",
    """
MATCH (n:Memory {scope_key: $scope_key, writer_key: $writer_key})
WITH n LIMIT $batch
WITH n, CASE WHEN n.ft_len IS NULL THEN null
             ELSE {ft: n.ft, ft_tf: n.ft_tf, ft_len: n.ft_len, speaker: n.speaker} END AS indexed
WITH n, indexed, coalesce(n.bytes, 0) AS bytes
DETACH DELETE n
WITH count(*) AS rows, collect(indexed) AS indexed, sum(bytes) AS bytes
OPTIONAL MATCH (s:Scope {scope_key: $scope_key})
SET s.memory_bytes = s.memory_bytes - bytes
RETURN rows, indexed
""",
)

# The scope's version counter (its quota) follows the deletion.
ERASE_AUTHORED_NOTE_VERSIONS = Statement(
    "ERASE_AUTHORED_NOTE_VERSIONS",
    """
MATCH (n:MemoryVersion {scope_key: $scope_key, writer_key: $writer_key})
WITH n LIMIT $batch
DELETE n
WITH count(*) AS rows
OPTIONAL MATCH (s:Scope {scope_key: $scope_key})
SET s.note_versions = CASE WHEN s.note_versions IS NULL THEN null
                           ELSE s.note_versions - rows END
RETURN rows
""",
)

# An entity nobody's fact uses any more goes; one others' facts still name stays, anonymised,
# and so does one that set-aside entities were merged into: without it they could never be
# unmerged (``_HOLDS_MERGED``).
ERASE_AUTHORED_ENTITIES = Statement(
    "ERASE_AUTHORED_ENTITIES",
    """
MATCH (n:Entity {scope_key: $scope_key, writer_key: $writer_key})
WHERE NOT EXISTS { MATCH (n)-[:FACT]-() } AND NOT """
    + _HOLDS_MERGED
    + """
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS rows
""",
)

# -- merges (cypher/entities.py): what the person's entities left as spellings of others' ------

# A batch of the person's set-aside entities, with what names them elsewhere: the merge
# record (its added aliases and merged ids), the kept entity's aliases, and the names the
# record's other set-aside entities contribute (so a name they share is kept). One that was
# itself the kept entity of an earlier merge is left out: others' set-aside entities point at
# it, so it stays, in its merge, anonymised (``ANONYMISE_MERGED_ENTITIES``).
AUTHORED_MERGED_ENTITIES = Statement(
    "AUTHORED_MERGED_ENTITIES",
    """
MATCH (n:MergedEntity {scope_key: $scope_key, writer_key: $writer_key})
WHERE NOT """
    + _HOLDS_MERGED
    + """
WITH n AS m LIMIT $batch
OPTIONAL MATCH (r:EntityMerge {scope_key: $scope_key, id: m.merge_id})
OPTIONAL MATCH (k:Entity {scope_key: $scope_key, id: m.merged_into})
RETURN m.id AS id, [m.name] + coalesce(m.aliases, []) AS names, m.merge_id AS merge_id,
       r.added_aliases AS added, r.merged_ids AS merged_ids, k.id AS kept_id,
       k.aliases AS kept_aliases,
       COLLECT { MATCH (o:MergedEntity {scope_key: $scope_key, merge_id: m.merge_id})
                 WHERE coalesce(o.writer_key, '') <> $writer_key
                 UNWIND [o.name] + coalesce(o.aliases, []) AS n RETURN n } AS others
""",
)

# The person's set-aside entities go, and with them their names: out of their merge's
# record (a record left merging nothing goes) and out of the kept entity's aliases, both
# computed by the resolver (resolvers/erasure/authored.py ``merged``).
ERASE_AUTHORED_MERGED = Statement(
    "ERASE_AUTHORED_MERGED",
    """CYPHER 25
CALL () {
  UNWIND $kept AS x
  MATCH (k:Entity {scope_key: $scope_key, id: x.id})
  SET k.aliases = x.aliases, k.alias_norms = x.alias_norms, k.alias_keys = x.alias_keys
}
CALL () {
  UNWIND $records AS x
  MATCH (r:EntityMerge {scope_key: $scope_key, id: x.id})
  SET r.merged_ids = x.merged_ids, r.added_aliases = x.added_aliases
  WITH r, x WHERE size(x.merged_ids) = 0
  DELETE r
}
CALL () {
  UNWIND $ids AS id
  MATCH (m:MergedEntity {scope_key: $scope_key, id: id})
  DETACH DELETE m
}
RETURN size($ids) AS rows
""",
)

# A merge the person made stays (others' entities may need it undone), without who made it.
ANONYMISE_MERGES = Statement(
    "ANONYMISE_MERGES",
    """
MATCH (n:EntityMerge {scope_key: $scope_key, writer_key: $writer_key})
WITH n LIMIT $batch
"""
    + _ANONYMISE
    + """
RETURN count(*) AS rows
""",
)

ANONYMISE_MERGED_ENTITIES = Statement(
    "ANONYMISE_MERGED_ENTITIES",
    """
MATCH (n:MergedEntity {scope_key: $scope_key, writer_key: $writer_key})
WITH n LIMIT $batch
"""
    + _ANONYMISE
    + """
RETURN count(*) AS rows
""",
)


def _anonymise(name: str, match: LiteralString) -> Statement:
    return Statement(
        name,
        match
        + """
WITH n LIMIT $batch
"""
        + _ANONYMISE
        + """
RETURN count(*) AS rows
""",
    )


# ANONYMISE, per label: the row stays, the author goes.
ANONYMISE: dict[str, Statement] = {
    "entries": _anonymise(
        "ANONYMISE_NOTES", "MATCH (n:Memory {scope_key: $scope_key, writer_key: $writer_key})"
    ),
    "note_versions": _anonymise(
        "ANONYMISE_NOTE_VERSIONS",
        "MATCH (n:MemoryVersion {scope_key: $scope_key, writer_key: $writer_key})",
    ),
    "documents": _anonymise(
        "ANONYMISE_DOCUMENTS", "MATCH (n:Document {scope_key: $scope_key, writer_key: $writer_key})"
    ),
    "chunks": _anonymise(
        "ANONYMISE_CHUNKS", "MATCH (n:Chunk {scope_key: $scope_key, writer_key: $writer_key})"
    ),
    "chunk_revisions": _anonymise(
        "ANONYMISE_CHUNK_VERSIONS",
        "MATCH (n:ChunkVersion {scope_key: $scope_key, writer_key: $writer_key})",
    ),
    "document_revisions": _anonymise(
        "ANONYMISE_DOCUMENT_REVISIONS",
        "MATCH (n:DocumentRevision {scope_key: $scope_key, writer_key: $writer_key})",
    ),
    "entities": _anonymise(
        "ANONYMISE_ENTITIES", "MATCH (n:Entity {scope_key: $scope_key, writer_key: $writer_key})"
    ),
    "facts": _anonymise(
        "ANONYMISE_FACTS", "MATCH ()-[n:FACT {scope_key: $scope_key, writer_key: $writer_key}]->()"
    ),
}

# Every ANONYMISE statement, where the statement checks find them.
ANONYMISE_ALL = tuple(ANONYMISE.values())

# Rows of the scope written before authorship was stamped: nobody can say who wrote them.
UNATTRIBUTED = Statement(
    "UNATTRIBUTED",
    """
RETURN COUNT { MATCH (n:Memory {scope_key: $scope_key}) WHERE n.writer_id IS NULL }
     + COUNT { MATCH (n:MemoryVersion {scope_key: $scope_key}) WHERE n.writer_id IS NULL }
     + COUNT { MATCH (n:Document {scope_key: $scope_key}) WHERE n.writer_id IS NULL }
     + COUNT { MATCH (n:Chunk {scope_key: $scope_key})
               WHERE n.writer_id IS NULL AND n.index IS NOT NULL }
     + COUNT { MATCH (n:ChunkVersion {scope_key: $scope_key}) WHERE n.writer_id IS NULL }
     + COUNT { MATCH (n:DocumentRevision {scope_key: $scope_key}) WHERE n.writer_id IS NULL }
     + COUNT { MATCH (n:Entity {scope_key: $scope_key}) WHERE n.writer_id IS NULL } AS rows
""",
)

# -- the tenant's policy (one node in the tenant scope) --------------------------------------

GET_POLICY = Statement(
    "GET_ERASURE_POLICY",
    """
OPTIONAL MATCH (p:ErasurePolicy {scope_key: $scope_key})
RETURN p.authored AS authored, p.updated_at AS updated_at
""",
)

SET_POLICY = Statement(
    "SET_ERASURE_POLICY",
    """
MERGE (p:ErasurePolicy {scope_key: $scope_key})
ON CREATE SET p.tenant_id = $tenant_id, p.scope = $scope, p.owner_id = $owner_id
SET p.authored = $authored, p.updated_at = $now
RETURN p.authored AS authored, p.updated_at AS updated_at
""",
)

# The job's authored counters, added in the same transaction as the batch: one list per
# outcome, in the order of ``erasure_jobs.PLANES``.
ADD_AUTHORED = Statement(
    "ADD_AUTHORED",
    """
MATCH (e:Erasure {scope_key: $scope_key, id: $id})
SET e.authored_policy = coalesce(e.authored_policy, $policy),
    e.authored_deleted = [i IN range(0, size($deleted) - 1)
                          | coalesce(e.authored_deleted[i], 0) + $deleted[i]],
    e.authored_anonymised = [i IN range(0, size($anonymised) - 1)
                             | coalesce(e.authored_anonymised[i], 0) + $anonymised[i]]
""",
)

SET_UNATTRIBUTED = Statement(
    "SET_UNATTRIBUTED",
    """
MATCH (e:Erasure {scope_key: $scope_key, id: $id})
SET e.unattributed = $rows
""",
)
