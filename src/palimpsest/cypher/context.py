"""What ``context`` reads besides recall (resolvers/recall/context_block.py): the facts about
the entities a query names. Pinned notes are read by ``cypher/memory.py`` and
``cypher/note_versions.py``.
"""

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import FACT_COLUMNS, FACT_VISIBLE

# The entities of the scope whose normalised name or alias is one of ``$names`` (as the
# mentions extractor resolves a turn's names, cypher/conversations.py ``ENTITIES_NAMED``), and
# the facts touching them, in either direction, under the time view: newest first.
ENTITY_FACTS = Statement(
    "ENTITY_FACTS",
    """CYPHER 25
CALL () {
  MATCH (e:Entity {scope_key: $scope_key})
  WHERE e.normalized_name IN $names AND e.type <> $value_type
  RETURN e
  UNION
  MATCH (e:Entity {scope_key: $scope_key})
  WHERE e.alias_norms IS NOT NULL AND e.type <> $value_type
    AND any(a IN e.alias_norms WHERE a IN $names)
  RETURN e
}
MATCH (e)-[f:FACT]-(:Entity)
WHERE f.scope_key = $scope_key AND """
    + FACT_VISIBLE
    + """
WITH DISTINCT f
MATCH (s:Entity)-[f]->(o:Entity)
RETURN"""
    + FACT_COLUMNS
    + """
ORDER BY f.created_at DESC, f.id
LIMIT $limit
""",
)
