"""Constraints and indexes for every plane, all idempotent (``IF NOT EXISTS``).

Vector and full-text indexes carry ``scope_key`` so a search can be filtered inside the
index (``SEARCH ... WHERE`` for vectors, a required Lucene clause for full-text) instead of
after it, which is what keeps a tiny scope from being starved.
"""

from typing import LiteralString

from palimpsest.cypher.executor import Statement


def _unscoped(name: str, text: LiteralString) -> Statement:
    """Schema statements touch no scoped rows (DDL, index listing, the schema record)."""
    return Statement(name, text, scoped=False)


CONSTRAINTS = (
    _unscoped(
        "CONSTRAINT_MEMORY_KEY",
        "CREATE CONSTRAINT memory_key IF NOT EXISTS "
        "FOR (m:Memory) REQUIRE (m.scope_key, m.key) IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_SCOPE_KEY",
        "CREATE CONSTRAINT scope_key IF NOT EXISTS FOR (s:Scope) REQUIRE s.scope_key IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_DOCUMENT_ID",
        "CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_CHUNK_ID",
        "CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_ENTITY_KEY",
        "CREATE CONSTRAINT entity_key IF NOT EXISTS "
        "FOR (e:Entity) REQUIRE (e.scope_key, e.type, e.normalized_name) IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_FACT_ID",
        "CREATE CONSTRAINT fact_id IF NOT EXISTS FOR ()-[f:FACT]-() REQUIRE f.id IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_FACT_KEY",
        "CREATE CONSTRAINT fact_key IF NOT EXISTS "
        "FOR ()-[f:FACT]-() REQUIRE (f.scope_key, f.natural_key) IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_ENTITY_ID",
        "CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_ONTOLOGY_SCOPE",
        "CREATE CONSTRAINT ontology_scope IF NOT EXISTS "
        "FOR (o:Ontology) REQUIRE o.scope_key IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_PENDING_ID",
        "CREATE CONSTRAINT pending_span_id IF NOT EXISTS "
        "FOR (p:PendingSpan) REQUIRE p.id IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_TERM_STATS",
        "CREATE CONSTRAINT term_stats_key IF NOT EXISTS "
        "FOR (s:TermStats) REQUIRE (s.scope_key, s.kind, s.term, s.shard) IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_SCHEMA_INFO",
        "CREATE CONSTRAINT schema_info_id IF NOT EXISTS FOR (s:SchemaInfo) REQUIRE s.id IS UNIQUE",
    ),
)

RANGE_INDEXES = (
    _unscoped(
        "INDEX_DOCUMENT_SCOPE",
        "CREATE INDEX document_scope IF NOT EXISTS FOR (d:Document) ON (d.scope_key)",
    ),
    _unscoped(
        "INDEX_CHUNK_SCOPE",
        "CREATE INDEX chunk_scope IF NOT EXISTS FOR (c:Chunk) ON (c.scope_key)",
    ),
    _unscoped(
        "INDEX_CHUNK_DOCUMENT",
        "CREATE INDEX chunk_document IF NOT EXISTS FOR (c:Chunk) ON (c.document_id)",
    ),
    _unscoped(
        "INDEX_FACT_LINEAGE",
        "CREATE INDEX fact_lineage IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.lineage)",
    ),
    _unscoped(
        "INDEX_ENTITY_NAME",
        "CREATE INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON (e.normalized_name)",
    ),
    _unscoped(
        "INDEX_CHUNK_OBSERVED",
        "CREATE INDEX chunk_observed IF NOT EXISTS FOR (c:Chunk) ON (c.observed_at)",
    ),
    _unscoped(
        "INDEX_FACT_SCOPE",
        "CREATE INDEX fact_scope IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.scope_key)",
    ),
    _unscoped(
        "INDEX_FACT_VALIDITY",
        "CREATE INDEX fact_validity IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.valid_at, f.invalid_at)",
    ),
    _unscoped(
        "INDEX_FACT_KNOWN",
        "CREATE INDEX fact_known IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.created_at, f.expired_at)",
    ),
    # Statistics are read by (scope, kind, term) whatever the shard: the unique constraint's
    # index needs the shard too, so it cannot serve those reads.
    _unscoped(
        "INDEX_TERM_STATS",
        "CREATE INDEX term_stats_lookup IF NOT EXISTS "
        "FOR (s:TermStats) ON (s.scope_key, s.kind, s.term)",
    ),
    _unscoped(
        "INDEX_PENDING_QUEUE",
        "CREATE INDEX pending_queue IF NOT EXISTS "
        "FOR (p:PendingSpan) ON (p.status, p.lease_expires_at)",
    ),
)

# Vector indexes: cosine, unquantized so the score returned is the raw cosine similarity.
VECTOR_INDEXES = (
    _unscoped(
        "INDEX_MEMORY_VECTOR",
        "CYPHER 25 CREATE VECTOR INDEX memory_embedding IF NOT EXISTS "
        "FOR (m:Memory) ON m.embedding WITH [m.scope_key] OPTIONS $options",
    ),
    _unscoped(
        "INDEX_CHUNK_VECTOR",
        "CYPHER 25 CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS "
        "FOR (c:Chunk) ON c.embedding WITH [c.scope_key] OPTIONS $options",
    ),
    _unscoped(
        "INDEX_FACT_VECTOR",
        "CYPHER 25 CREATE VECTOR INDEX fact_embedding IF NOT EXISTS "
        "FOR ()-[f:FACT]-() ON f.embedding WITH [f.scope_key] OPTIONS $options",
    ),
)

# Full-text indexes hold each row's pre-analyzed terms (``ft``, whitespace analyzer): Lucene
# only finds the rows of a scope that hold a term; BM25 is computed with the scope's own
# statistics (``fulltext.py``), so no index-wide statistic reaches a score.
FULLTEXT_INDEXES = (
    _unscoped(
        "INDEX_MEMORY_FULLTEXT",
        "CREATE FULLTEXT INDEX memory_terms IF NOT EXISTS "
        "FOR (m:Memory) ON EACH [m.ft, m.scope_key] OPTIONS $options",
    ),
    _unscoped(
        "INDEX_CHUNK_FULLTEXT",
        "CREATE FULLTEXT INDEX chunk_terms IF NOT EXISTS "
        "FOR (c:Chunk) ON EACH [c.ft, c.scope_key] OPTIONS $options",
    ),
    _unscoped(
        "INDEX_FACT_FULLTEXT",
        "CREATE FULLTEXT INDEX fact_terms IF NOT EXISTS "
        "FOR ()-[f:FACT]-() ON EACH [f.ft, f.scope_key] OPTIONS $options",
    ),
)

# Full-text indexes cannot change analyzer in place: a stale one is dropped and rebuilt.
DROP_FULLTEXT = {
    "memory_terms": _unscoped("DROP_MEMORY_FULLTEXT", "DROP INDEX memory_terms IF EXISTS"),
    "chunk_terms": _unscoped("DROP_CHUNK_FULLTEXT", "DROP INDEX chunk_terms IF EXISTS"),
    "fact_terms": _unscoped("DROP_FACT_FULLTEXT", "DROP INDEX fact_terms IF EXISTS"),
}

AWAIT_INDEXES = _unscoped("AWAIT_INDEXES", "CALL db.awaitIndexes(300)")

LIST_INDEXES = _unscoped(
    "LIST_INDEXES",
    "SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, options "
    "RETURN name, type, state, labelsOrTypes, properties, options ORDER BY name",
)

# The embedding model and dimension the vector indexes were built for; a server started
# with a different model is refused instead of silently mixing vector spaces.
MERGE_SCHEMA_INFO = _unscoped(
    "MERGE_SCHEMA_INFO",
    """
MERGE (s:SchemaInfo {id: 'palimpsest'})
ON CREATE SET s.embedding_model = $model, s.embedding_dimensions = $dimensions,
              s.created_at = datetime()
RETURN s.embedding_model AS model, s.embedding_dimensions AS dimensions
""",
)
