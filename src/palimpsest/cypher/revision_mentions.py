"""Mentions across a document's revisions (resolvers/documents/mentions.py).

A closed chunk version keeps the ``MENTIONS`` edges its text had: a relabelled chunk keeps
its own, an edited chunk's are copied onto the version the edit writes. A version is found
by ``(scope_key, document_id)`` (its index) and its chunk id; an entity by its id within the
scope, so no edge ever joins two scopes.
"""

from palimpsest.cypher.driver.executor import Statement

# The edited chunks' mentions, copied onto the versions this revision closed (with every
# property, offsets into the old text included), and answered for the new text to follow.
COPY_MENTIONS_TO_VERSIONS = Statement(
    "COPY_MENTIONS_TO_VERSIONS",
    """
MATCH (v:ChunkVersion {scope_key: $scope_key, document_id: $id})
WHERE v.to_revision = $revision AND v.id IN $ids
MATCH (c:Chunk {scope_key: $scope_key, id: v.id})-[m:MENTIONS {scope_key: $scope_key}]->
      (e:Entity {scope_key: $scope_key})
WHERE c.index IS NOT NULL
CREATE (v)-[n:MENTIONS]->(e)
SET n = properties(m)
RETURN c.id AS chunk_id, e.id AS entity_id, properties(m) AS props
""",
)

# Each chunk's mentions replaced by ``r.mentions`` (entity id and properties): what followed
# an edit into the new text.
REPLACE_MENTIONS = Statement(
    "REPLACE_MENTIONS",
    """
UNWIND $rows AS r
MATCH (c:Chunk {scope_key: $scope_key, id: r.id})
WHERE c.index IS NOT NULL
CALL (c) {
  MATCH (c)-[m:MENTIONS {scope_key: $scope_key}]->(:Entity {scope_key: $scope_key})
  DELETE m
}
WITH c, r
UNWIND r.mentions AS x
MATCH (e:Entity {scope_key: $scope_key, id: x.entity_id})
CREATE (c)-[n:MENTIONS]->(e)
SET n = x.props, n.scope_key = $scope_key
RETURN count(n) AS mentions
""",
)

# The restored chunks take the mentions of the version of revision ``$restored`` each one
# restores (a mention the chunk already has at the same place is not drawn twice).
RESTORE_VERSION_MENTIONS = Statement(
    "RESTORE_VERSION_MENTIONS",
    """
MATCH (v:ChunkVersion {scope_key: $scope_key, document_id: $id})
WHERE v.from_revision <= $restored AND v.to_revision > $restored AND v.id IN $ids
MATCH (c:Chunk {scope_key: $scope_key, id: v.id})
WHERE c.index IS NOT NULL
MATCH (v)-[m:MENTIONS {scope_key: $scope_key}]->(e:Entity {scope_key: $scope_key})
WHERE NOT EXISTS {
  MATCH (c)-[x:MENTIONS {scope_key: $scope_key}]->(e)
  WHERE coalesce(x.start, -1) = coalesce(m.start, -1) AND coalesce(x.end, -1) = coalesce(m.end, -1)
}
CREATE (c)-[n:MENTIONS]->(e)
SET n = properties(m)
RETURN count(n) AS restored
""",
)
