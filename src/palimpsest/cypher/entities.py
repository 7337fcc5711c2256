"""Entities (docs/reference/facts.md, Entities): one entity per name, duplicates, merges.

An entity is keyed by ``(scope_key, type, normalized_name)``; ``name_key`` is its name with
case, punctuation and whitespace folded away (``schema.names.fold``) and ``alias_keys`` its
aliases folded so. A fact write resolves each name to a stored entity of the same type by
normalised name, then folded name, then alias (``RESOLVE_ENTITIES``), so variants of one name
are one entity.

A merge moves every ``FACT`` and ``MENTIONS`` relationship of the merged entities onto the kept
one (a relationship cannot be re-pointed: it is deleted and created again with the same
properties, the fact's id included) and pushes the merge's id and the end's former entity onto
stacks on the relationship (``merge_ids``, ``merge_subjects``/``merge_objects`` for facts,
``merged_from`` for mentions; ``''`` for an end that stayed). The merged entities keep their
node, ids and properties under the label ``MergedEntity`` instead of ``Entity``; an
``EntityMerge`` node records the merge. No relationship is involved in the record, and all of
it lies in the one scope. An unmerge pops exactly what its merge pushed.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import LOCK_FACTS

SUBJECT_TYPES = Statement(
    "SUBJECT_TYPES",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.normalized_name IN $names
RETURN e.normalized_name AS name, collect(DISTINCT e.type) AS types
""",
)

# Entities left with no fact and no mention carry nothing but a name: they go too. A mention
# from a past revision's chunk (a :ChunkVersion) does not keep one; its edge goes with it.
# An entity a merge kept stays while it has set-aside entities: they are undone onto it.
DROP_ORPHAN_ENTITIES = Statement(
    "DROP_ORPHAN_ENTITIES",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.id IN $ids
  AND NOT EXISTS { (e)-[r]-(x) WHERE NOT (r:MENTIONS AND x:ChunkVersion) }
  AND NOT EXISTS { MATCH (:MergedEntity {scope_key: $scope_key, merged_into: e.id}) }
DETACH DELETE e
RETURN count(*) AS entities
""",
)

# The stored entities each name may mean: rank 0 by normalised name, 1 by folded name, 2 by
# a folded alias (a scan of the type's aliased entities, as ``ENTITIES_NAMED`` does).
_RESOLVE: LiteralString = """
UNWIND $names AS n
CALL (n) {
  MATCH (e:Entity {scope_key: $scope_key, type: n.type, normalized_name: n.norm})
  RETURN e, 0 AS rank
  UNION
  MATCH (e:Entity {scope_key: $scope_key, name_key: n.key})
  WHERE e.type = n.type
  RETURN e, 1 AS rank
  UNION
  MATCH (e:Entity {scope_key: $scope_key, type: n.type})
  WHERE e.alias_keys IS NOT NULL AND n.key IN e.alias_keys
  RETURN e, 2 AS rank
}
RETURN n.i AS i, e.normalized_name AS norm, e.id AS id, rank"""

RESOLVE_ENTITIES = Statement("RESOLVE_ENTITIES", _RESOLVE + "\nORDER BY i, rank, id\n")

# The scope's fact lock (cypher/facts.py ``LOCK_SCOPE_FACTS``) and the names resolved under
# it, in one round trip: the rows of ``RESOLVE_ENTITIES`` (none when no name is stored), then
# one last row (``i`` null) listing which of the batch's natural keys (``$keys``) a stored
# fact holds, read under the lock: the others cannot conflict (``resolvers.entities.Proof``).
LOCK_RESOLVE_ENTITIES = Statement(
    "LOCK_RESOLVE_ENTITIES",
    "CYPHER 25"
    + LOCK_FACTS
    + """WITH now
CALL () {"""
    + _RESOLVE
    + """, null AS stored_keys
  UNION ALL
  UNWIND $keys AS k
  OPTIONAL MATCH ()-[f:FACT {scope_key: $scope_key, natural_key: k}]->()
  WITH collect(f.natural_key) AS stored_keys
  RETURN null AS i, null AS norm, null AS id, null AS rank, stored_keys
}
RETURN i, norm, id, rank, stored_keys, now
ORDER BY i, rank, id
""",
)

_ENTITY: LiteralString = """e {.id, .type, .name, .aliases, .normalized_name, .name_key,
   .alias_keys, provenance: e {.tenant_id, .session_id, .run_id, .agent_name, .model, .origin,
   .writer_id, .compaction_generation}}"""

# The names the duplicate finder compares, capped (``resolvers.entities.MAX_SCAN``).
ENTITY_NAMES = Statement(
    "ENTITY_NAMES",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.type <> $value_type
RETURN """
    + _ENTITY
    + """ AS entity
ORDER BY e.type, e.normalized_name, e.id
LIMIT $cap
""",
)

MERGE_ENTITIES_BY_ID = Statement(
    "MERGE_ENTITIES_BY_ID",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.id IN $ids
RETURN """
    + _ENTITY
    + """ AS entity
""",
)

MOVE_FACTS = Statement(
    "MOVE_FACTS",
    """
UNWIND $merged_ids AS mid
MATCH (:Entity {scope_key: $scope_key, id: mid})-[f:FACT {scope_key: $scope_key}]-()
WITH DISTINCT f
MATCH (s:Entity)-[f]->(o:Entity)
MATCH (k:Entity {scope_key: $scope_key, id: $keep_id})
WITH f, k, s, o, properties(f) AS props, s.id IN $merged_ids AS ms, o.id IN $merged_ids AS mo
WITH f, props, ms, mo, s.id AS sid, o.id AS oid,
     CASE WHEN ms THEN k ELSE s END AS ns, CASE WHEN mo THEN k ELSE o END AS nobj
DELETE f
CREATE (ns)-[g:FACT]->(nobj)
SET g = props
SET g.merge_ids = coalesce(props.merge_ids, []) + [$merge_id],
    g.merge_subjects = coalesce(props.merge_subjects, []) + [CASE WHEN ms THEN sid ELSE '' END],
    g.merge_objects = coalesce(props.merge_objects, []) + [CASE WHEN mo THEN oid ELSE '' END]
RETURN count(g) AS moved
""",
)

MOVE_MENTIONS = Statement(
    "MOVE_MENTIONS",
    """
UNWIND $merged_ids AS mid
MATCH (m:Entity {scope_key: $scope_key, id: mid})<-[r:MENTIONS {scope_key: $scope_key}]-(c)
MATCH (k:Entity {scope_key: $scope_key, id: $keep_id})
WITH r, c, k, m.id AS from_id, properties(r) AS props
DELETE r
CREATE (c)-[n:MENTIONS]->(k)
SET n = props
SET n.merge_ids = coalesce(props.merge_ids, []) + [$merge_id],
    n.merged_from = coalesce(props.merged_from, []) + [from_id]
RETURN count(n) AS moved
""",
)

# The merged entities step aside (same node, label ``MergedEntity``), the kept one takes
# their names as aliases, and the record is written.
RECORD_MERGE = Statement(
    "RECORD_MERGE",
    """
MATCH (k:Entity {scope_key: $scope_key, id: $keep_id})
SET k.aliases = $aliases, k.alias_norms = $alias_norms, k.alias_keys = $alias_keys
WITH k
UNWIND $merged_ids AS mid
MATCH (m:Entity {scope_key: $scope_key, id: mid})
REMOVE m:Entity
SET m:MergedEntity, m.merged_into = $keep_id, m.merge_id = $merge_id
WITH k, count(m) AS retired
CREATE (r:EntityMerge {scope_key: $scope_key, id: $merge_id})
SET r.tenant_id = $tenant_id, r.scope = $scope, r.owner_id = $owner_id,
    r.keep_id = $keep_id, r.merged_ids = $merged_ids, r.added_aliases = $added_aliases,
    r.facts_moved = $facts_moved, r.mentions_moved = $mentions_moved, r.created_at = $now,
    r.agent_name = $agent_name, r.run_id = $run_id, r.origin = $origin,
    r.session_id = $session_id, r.writer_id = $writer_id, r.writer_key = $writer_key
RETURN retired
""",
)

_MERGE: LiteralString = """r {.id, .keep_id, .merged_ids, .added_aliases, .facts_moved,
   .mentions_moved, .created_at, .undone_at}"""

LIST_MERGES = Statement(
    "LIST_MERGES",
    """
MATCH (r:EntityMerge {scope_key: $scope_key})
WHERE r.keep_id = $keep_id OR $keep_id IN r.merged_ids
RETURN """
    + _MERGE
    + """ AS merge
ORDER BY r.created_at DESC, r.id
LIMIT $limit
""",
)

# The record, locked, with what an unmerge must check: the kept entity still an entity, and
# no entity since written under a merged one's (type, normalised name).
LOCK_MERGE = Statement(
    "LOCK_MERGE",
    """
MATCH (r:EntityMerge {scope_key: $scope_key, id: $merge_id})
SET r.locked_at = $now
WITH r
OPTIONAL MATCH (k:Entity {scope_key: $scope_key, id: r.keep_id})
RETURN """
    + _MERGE
    + """ AS merge, k.aliases AS kept_aliases, k IS NOT NULL AS kept,
       COLLECT { MATCH (m:MergedEntity {scope_key: $scope_key, merge_id: r.id})
                 MATCH (e:Entity {scope_key: $scope_key, type: m.type,
                                  normalized_name: m.normalized_name})
                 RETURN e.id } AS taken
""",
)

RESTORE_ENTITIES = Statement(
    "RESTORE_ENTITIES",
    """
MATCH (m:MergedEntity {scope_key: $scope_key, merge_id: $merge_id})
REMOVE m:MergedEntity, m.merged_into, m.merge_id
SET m:Entity
RETURN count(m) AS restored
""",
)

# Pop this merge's entry off each stack (it may sit under a later merge's of the other end).
_POP: LiteralString = """CASE WHEN size(props.merge_ids) = 1 THEN null
     ELSE [j IN range(0, size(props.merge_ids) - 1) WHERE j <> i | props.{list}[j]] END"""

RESTORE_FACTS = Statement(
    "RESTORE_FACTS",
    """
MATCH (k:Entity {scope_key: $scope_key, id: $keep_id})-[f:FACT {scope_key: $scope_key}]-()
WHERE $merge_id IN coalesce(f.merge_ids, [])
WITH DISTINCT f
MATCH (s:Entity)-[f]->(o:Entity)
WITH f, s, o, properties(f) AS props,
     [j IN range(0, size(f.merge_ids) - 1) WHERE f.merge_ids[j] = $merge_id][0] AS i
OPTIONAL MATCH (ms:Entity {scope_key: $scope_key, id: props.merge_subjects[i]})
OPTIONAL MATCH (mo:Entity {scope_key: $scope_key, id: props.merge_objects[i]})
WITH f, props, i,
     CASE WHEN ms IS NOT NULL AND s.id = $keep_id THEN ms ELSE s END AS ns,
     CASE WHEN mo IS NOT NULL AND o.id = $keep_id THEN mo ELSE o END AS nobj
DELETE f
CREATE (ns)-[g:FACT]->(nobj)
SET g = props
SET g.merge_ids = """
    + _POP.replace("{list}", "merge_ids")
    + """,
    g.merge_subjects = """
    + _POP.replace("{list}", "merge_subjects")
    + """,
    g.merge_objects = """
    + _POP.replace("{list}", "merge_objects")
    + """
RETURN count(g) AS restored
""",
)

RESTORE_MENTIONS = Statement(
    "RESTORE_MENTIONS",
    """
MATCH (k:Entity {scope_key: $scope_key, id: $keep_id})<-[n:MENTIONS {scope_key: $scope_key}]-(c)
WHERE $merge_id IN coalesce(n.merge_ids, [])
WITH n, c, properties(n) AS props,
     [j IN range(0, size(n.merge_ids) - 1) WHERE n.merge_ids[j] = $merge_id][0] AS i
MATCH (m:Entity {scope_key: $scope_key, id: props.merged_from[i]})
DELETE n
CREATE (c)-[r:MENTIONS]->(m)
SET r = props
SET r.merge_ids = """
    + _POP.replace("{list}", "merge_ids")
    + """,
    r.merged_from = """
    + _POP.replace("{list}", "merged_from")
    + """
RETURN count(r) AS restored
""",
)

UNDO_MERGE = Statement(
    "UNDO_MERGE",
    """
MATCH (r:EntityMerge {scope_key: $scope_key, id: $merge_id})
MATCH (k:Entity {scope_key: $scope_key, id: r.keep_id})
SET k.aliases = $aliases, k.alias_norms = $alias_norms, k.alias_keys = $alias_keys,
    r.undone_at = $now
RETURN r.id AS id
""",
)
