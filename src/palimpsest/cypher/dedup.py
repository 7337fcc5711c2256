"""Near-duplicates (docs/reference/facts.md, Duplicates; docs/reference/recall.md, dedup).

``NEAR_DUPLICATE_FACTS`` lists, for each fact of a batch, the stored facts it may duplicate:
the same subject entity, the same predicate (after normalisation) and no retirement, each with
the cosine of the two facts' text embeddings (Neo4j's function answers ``(1 + cos) / 2``,
turned back into the cosine here). ``resolvers.dedup`` decides which one, if any, the new
fact merges into. ``HIT_EMBEDDINGS`` reads the embeddings of recall candidates so
that recall's ``dedup`` can compare them; both read one scope only.
"""

from palimpsest.cypher.driver.executor import Statement

NEAR_DUPLICATE_FACTS = Statement(
    "NEAR_DUPLICATE_FACTS",
    """
UNWIND $facts AS item
MATCH (s:Entity {scope_key: $scope_key, type: item.subject_type,
                 normalized_name: item.subject_norm})
MATCH (s)-[f:FACT {scope_key: $scope_key}]->(o:Entity)
WHERE f.expired_at IS NULL AND f.natural_key <> item.natural_key
  AND coalesce(f.predicate_key, toLower(f.predicate)) = item.predicate_key
RETURN item.index AS index, f.id AS id, f.natural_key AS natural_key,
       f.predicate AS predicate, f.valid_at AS valid_at, o.type AS object_type,
       o.normalized_name AS object_norm, o.name AS object_name,
       CASE WHEN f.embedding IS NULL THEN null
            ELSE 2 * vector.similarity.cosine(f.embedding, item.embedding) - 1 END AS cosine
ORDER BY index, id
""",
)

HIT_EMBEDDINGS = Statement(
    "HIT_EMBEDDINGS",
    """
CALL () {
  UNWIND $facts AS id
  MATCH ()-[f:FACT {scope_key: $scope_key, id: id}]->()
  RETURN collect({id: id, embedding: f.embedding}) AS facts
}
CALL () {
  UNWIND $notes AS id
  MATCH (m:Memory {scope_key: $scope_key, key: id})
  RETURN collect({id: id, embedding: m.embedding}) AS notes
}
CALL () {
  UNWIND $chunks AS id
  MATCH (c:Chunk {scope_key: $scope_key, id: id})
  RETURN collect({id: id, embedding: c.embedding}) AS chunks
}
RETURN facts, notes, chunks
""",
)
