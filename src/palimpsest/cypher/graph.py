"""Graph reads: entity lookup and the walks of graph recall, all inside one scope."""

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import FACT_COLUMNS, FACT_VISIBLE

_ENTITY = """RETURN e.id AS id, e.type AS type, e.name AS name, e.aliases AS aliases,
       e {.tenant_id, .session_id, .run_id, .agent_name, .model, .origin, .writer_id,
          .compaction_generation} AS provenance"""

# Paged in (normalized_name, type) order, unique per scope; no cursor: $after_name is null.
# A name finds an entity as a write would name it: by normalised name, folded name (``$key``)
# or a folded alias (so a merged-away spelling finds the entity it was merged into).
FIND_ENTITIES = Statement(
    "FIND_ENTITIES",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE ($type IS NULL OR e.type = $type)
  AND ($name IS NULL OR e.normalized_name = $name OR e.name_key = $key
       OR $key IN coalesce(e.alias_keys, []))
  AND ($contains IS NULL OR e.normalized_name CONTAINS $contains)
  AND ($after_name IS NULL OR e.normalized_name > $after_name
       OR (e.normalized_name = $after_name AND e.type > $after_type))
"""
    + _ENTITY
    + """, e.normalized_name AS normalized_name
ORDER BY e.normalized_name, e.type
LIMIT $limit
""",
)

ENTITIES_BY_ID = Statement(
    "ENTITIES_BY_ID",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.id IN $ids
"""
    + _ENTITY,
)

# Names a mentions extractor also finds the entity by (normalised in ``alias_norms``).
SET_ENTITY_ALIASES = Statement(
    "SET_ENTITY_ALIASES",
    """
MATCH (e:Entity {scope_key: $scope_key, id: $id})
SET e.aliases = $aliases, e.alias_norms = $norms, e.alias_keys = $keys
"""
    + _ENTITY,
)

# Facts touching any of the frontier entities, in either direction, under the time view.
NEIGHBOUR_FACTS = Statement(
    "NEIGHBOUR_FACTS",
    """
MATCH (e:Entity {scope_key: $scope_key})
WHERE e.id IN $ids
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key}]->(o:Entity)
WHERE (s = e OR o = e) AND """
    + FACT_VISIBLE
    + """
WITH DISTINCT f, s, o
RETURN"""
    + FACT_COLUMNS
    + """
ORDER BY f.created_at, f.id
LIMIT $limit
""",
)

# In-index filtering on scope_key keeps a small scope from being starved by big ones.
SEARCH_FACTS = Statement(
    "SEARCH_FACTS",
    """CYPHER 25
MATCH ()-[f:FACT]->()
  SEARCH f IN (VECTOR INDEX fact_embedding FOR $vector WHERE f.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score
MATCH (s:Entity)-[f]->(o:Entity)
WHERE f.scope_key = $scope_key AND """
    + FACT_VISIBLE
    + """
RETURN score,"""
    + FACT_COLUMNS
    + """
ORDER BY score DESC
""",
)

CHUNKS_FOR = Statement(
    "CHUNKS_FOR",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.id IN $chunk_ids AND c.index IS NOT NULL
RETURN c.id AS id, c.document_id AS document_id, c.type AS type, c.text AS text,
       c {.tenant_id, .session_id, .run_id, .agent_name, .model, .origin, .writer_id,
          .compaction_generation} AS provenance
UNION
MATCH (c:Chunk {scope_key: $scope_key})-[:MENTIONS {scope_key: $scope_key}]->
      (e:Entity {scope_key: $scope_key})
WHERE e.id IN $entity_ids
RETURN c.id AS id, c.document_id AS document_id, c.type AS type, c.text AS text,
       c {.tenant_id, .session_id, .run_id, .agent_name, .model, .origin, .writer_id,
          .compaction_generation} AS provenance
""",
)
