"""Conversation documents: what consolidated spans become, one document per session.

A conversation is an ordinary ``:Document`` with a root chunk, one ``turn`` chunk per span
(its id is the span's id, so a span can only ever be written once), ``HAS_CHILD`` edges from
the root and ``NEXT`` edges in span order. Spans may be consolidated out of order (a retried
span, a taken-over lease), so the resolver computes which ``NEXT`` edges to cut and draw; the
document's write lock, taken by ``OPEN_CONVERSATION``, serialises writers of one session.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement

_SCOPE: LiteralString = (
    "tenant_id: $tenant_id, scope: $scope, owner_id: $owner_id, scope_key: $scope_key"
)
_PROVENANCE: LiteralString = (
    "session_id: $session_id, run_id: $run_id, agent_name: $agent_name, model: $model, "
    "origin: $origin, compaction_generation: $compaction_generation"
)

OPEN_CONVERSATION = Statement(
    "OPEN_CONVERSATION",
    "MERGE (d:Document {scope_key: $scope_key, id: $id})"
    "\nON CREATE SET d.title = $title, d.path = $path, d.preamble = '', d.kind = $kind,"
    " d.created_at = $now, d.tenant_id = $tenant_id, d.scope = $scope,"
    " d.owner_id = $owner_id, d.session_id = $session_id, d.run_id = $run_id,"
    " d.agent_name = $agent_name, d.model = $model, d.origin = $origin,"
    " d.compaction_generation = $compaction_generation"
    "\nSET d.updated_at = $now, d.locked_at = $now"
    "\nMERGE (root:Chunk {scope_key: $scope_key, id: $root_id})"
    "\nON CREATE SET root += {document_id: $id, type: $root_type, text: '', separator: '',"
    " position: 0, revision: 1, created_at: $now, updated_at: $now, "
    + _SCOPE
    + ", "
    + _PROVENANCE
    + "}"
    "\nMERGE (d)-[:HAS_ROOT {scope_key: $scope_key}]->(root)"
    "\nRETURN d.id AS id, root.created_at = $now AS opened",
)

# Read under the document's lock: the tail of the reading order that new turns from
# position ``$first`` on can touch (the last turn before ``$first``, and every turn after
# it), in order. New turns usually come last, so this is one row, however long the chat.
CONVERSATION_TAIL = Statement(
    "CONVERSATION_TAIL",
    """
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key, document_id: $id})
WHERE p.index < $first
WITH max(p.index) AS start
MATCH (c:Chunk {scope_key: $scope_key, document_id: $id})
WHERE c.index >= coalesce(start, $first)
RETURN c.id AS id, c.index AS index
ORDER BY c.index
""",
)

WRITE_TURNS = Statement(
    "WRITE_TURNS",
    """
MATCH (root:Chunk {scope_key: $scope_key, id: $root_id})
UNWIND $turns AS t
CREATE (x:Chunk)
SET x = t, x.document_id = $id, x.revision = 1, x.created_at = $now, x.updated_at = $now,
    x.tenant_id = $tenant_id, x.scope = $scope, x.owner_id = $owner_id,
    x.scope_key = $scope_key
CREATE (root)-[:HAS_CHILD {position: t.position, scope_key: $scope_key}]->(x)
RETURN count(x) AS turns
""",
)

UNLINK_TURNS = Statement(
    "UNLINK_TURNS",
    """
UNWIND $pairs AS pair
MATCH (a:Chunk {scope_key: $scope_key, id: pair[0]})-[r:NEXT]->
      (b:Chunk {scope_key: $scope_key, id: pair[1]})
DELETE r
""",
)

LINK_TURNS = Statement(
    "LINK_TURNS",
    """
UNWIND $pairs AS pair
MATCH (a:Chunk {scope_key: $scope_key, id: pair[0]})
MATCH (b:Chunk {scope_key: $scope_key, id: pair[1]})
CREATE (a)-[:NEXT {scope_key: $scope_key}]->(b)
""",
)

# Entities a chunk names, found by normalised name (index) or by alias (a scan of the scope).
# The scope's named entities (not literal values), at most ``$limit``: matched against a
# batch's word runs in Python when the scope holds fewer entities than the runs are many
# (``resolvers/cycle/consolidate.py``), instead of sending every run as ``$names``.
SCOPE_ENTITY_NAMES = Statement(
    "SCOPE_ENTITY_NAMES",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.type <> $value_type
RETURN e.type AS type, e.name AS name, e.normalized_name AS norm,
       coalesce(e.alias_norms, []) AS aliases
LIMIT $limit
""",
)

ENTITIES_NAMED = Statement(
    "ENTITIES_NAMED",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.normalized_name IN $names AND e.type <> $value_type
RETURN e.type AS type, e.name AS name, e.normalized_name AS norm, [] AS aliases
UNION
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.alias_norms IS NOT NULL AND e.type <> $value_type
  AND any(a IN e.alias_norms WHERE a IN $names)
RETURN e.type AS type, e.name AS name, e.normalized_name AS norm, e.alias_norms AS aliases
""",
)

# Mention edges from turns to entities of the same scope; an entity named for the first time
# (a speaker) is created with the turn's provenance.
WRITE_MENTIONS = Statement(
    "WRITE_MENTIONS",
    """
UNWIND $mentions AS m
MERGE (e:Entity {scope_key: $scope_key, type: m.type, normalized_name: m.norm})
ON CREATE SET e.id = m.entity_id, e.name = m.name, e.created_at = $now,
              e.tenant_id = $tenant_id, e.scope = $scope, e.owner_id = $owner_id,
              e.session_id = m.session_id, e.run_id = m.run_id, e.agent_name = m.agent_name,
              e.model = m.model, e.origin = m.origin,
              e.compaction_generation = m.compaction_generation
WITH e, m
MATCH (c:Chunk {scope_key: $scope_key, id: m.chunk_id})
MERGE (c)-[r:MENTIONS {scope_key: $scope_key}]->(e)
ON CREATE SET r.start = m.start, r.end = m.end
RETURN count(r) AS mentions
""",
)
