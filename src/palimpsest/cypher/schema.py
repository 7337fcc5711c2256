"""Constraints and indexes for every plane, all idempotent (``IF NOT EXISTS``).

Vector and full-text indexes carry ``scope_key`` so a search can be filtered inside the
index (``SEARCH ... WHERE`` for vectors, a required Lucene clause for full-text) instead of
after it, which is what keeps a tiny scope from being starved.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import SchemaStatement


def _unscoped(name: str, text: LiteralString) -> SchemaStatement:
    """Schema statements touch no scoped rows (DDL, index listing, the schema record)."""
    return SchemaStatement(name, text)


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
    # One erasure policy per tenant (cypher/authored.py), merged by its scope key.
    _unscoped(
        "CONSTRAINT_ERASURE_POLICY_SCOPE",
        "CREATE CONSTRAINT erasure_policy_scope IF NOT EXISTS "
        "FOR (p:ErasurePolicy) REQUIRE p.scope_key IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_PENDING_ID",
        "CREATE CONSTRAINT pending_span_id IF NOT EXISTS "
        "FOR (p:PendingSpan) REQUIRE p.id IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_SOURCE_KEY",
        "CREATE CONSTRAINT source_key IF NOT EXISTS "
        "FOR (x:Source) REQUIRE (x.scope_key, x.fact_id, x.key) IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_ENTITY_MERGE_ID",
        "CREATE CONSTRAINT entity_merge_id IF NOT EXISTS "
        "FOR (r:EntityMerge) REQUIRE (r.scope_key, r.id) IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_FACT_PAIR_ID",
        "CREATE CONSTRAINT fact_pair_id IF NOT EXISTS "
        "FOR (p:FactPair) REQUIRE (p.scope_key, p.id) IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_ERASURE_ID",
        "CREATE CONSTRAINT erasure_id IF NOT EXISTS FOR (e:Erasure) REQUIRE e.id IS UNIQUE",
    ),
    _unscoped(
        "CONSTRAINT_ERASURE_ACTIVE",
        "CREATE CONSTRAINT erasure_active IF NOT EXISTS "
        "FOR (e:Erasure) REQUIRE (e.scope_key, e.active_key) IS UNIQUE",
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

# Every scoped label and relationship type can be read by ``scope_key`` alone (erasure, exact
# vector legs, counts): a composite index whose first property is ``scope_key`` is not used
# for that, and a label scan costs what every tenant holds.
RANGE_INDEXES = (
    _unscoped(
        "INDEX_MEMORY_SCOPE",
        "CREATE INDEX memory_scope IF NOT EXISTS FOR (m:Memory) ON (m.scope_key)",
    ),
    _unscoped(
        "INDEX_MEMORY_VERSION_SCOPE",
        "CREATE INDEX memory_version_scope IF NOT EXISTS FOR (v:MemoryVersion) ON (v.scope_key)",
    ),
    # A key's past versions in time order (history pages, the newest version under a write).
    _unscoped(
        "INDEX_MEMORY_VERSION_KEY",
        "CREATE INDEX memory_version_key IF NOT EXISTS "
        "FOR (v:MemoryVersion) ON (v.scope_key, v.key, v.created_at)",
    ),
    _unscoped(
        "INDEX_SOURCE_SCOPE",
        "CREATE INDEX source_scope IF NOT EXISTS FOR (x:Source) ON (x.scope_key)",
    ),
    _unscoped(
        "INDEX_TERM_STATS_SCOPE",
        "CREATE INDEX term_stats_scope IF NOT EXISTS FOR (s:TermStats) ON (s.scope_key)",
    ),
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
    # Passages (cypher/passages.py): a long chunk's further vectors, by scope (the exact leg,
    # erasure) and by their chunk (replaced with its text).
    _unscoped(
        "INDEX_PASSAGE_SCOPE",
        "CREATE INDEX passage_scope IF NOT EXISTS FOR (p:Passage) ON (p.scope_key)",
    ),
    _unscoped(
        "INDEX_PASSAGE_CHUNK",
        "CREATE INDEX passage_chunk IF NOT EXISTS FOR (p:Passage) ON (p.scope_key, p.chunk_id)",
    ),
    # Revisions (cypher/revisions.py): closed chunk versions and revision records by scope
    # (erasure) and by document (past reads, history); a re-import finds its document by path.
    _unscoped(
        "INDEX_CHUNK_VERSION_SCOPE",
        "CREATE INDEX chunk_version_scope IF NOT EXISTS FOR (c:ChunkVersion) ON (c.scope_key)",
    ),
    _unscoped(
        "INDEX_CHUNK_VERSION_DOCUMENT",
        "CREATE INDEX chunk_version_document IF NOT EXISTS "
        "FOR (c:ChunkVersion) ON (c.scope_key, c.document_id)",
    ),
    _unscoped(
        "INDEX_DOCUMENT_REVISION_SCOPE",
        "CREATE INDEX document_revision_scope IF NOT EXISTS "
        "FOR (r:DocumentRevision) ON (r.scope_key)",
    ),
    _unscoped(
        "INDEX_DOCUMENT_REVISION",
        "CREATE INDEX document_revision IF NOT EXISTS "
        "FOR (r:DocumentRevision) ON (r.scope_key, r.document_id)",
    ),
    _unscoped(
        "INDEX_DOCUMENT_PATH",
        "CREATE INDEX document_path IF NOT EXISTS FOR (d:Document) ON (d.scope_key, d.path)",
    ),
    _unscoped(
        "INDEX_FACT_LINEAGE",
        "CREATE INDEX fact_lineage IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.lineage)",
    ),
    _unscoped(
        "INDEX_ENTITY_SCOPE",
        "CREATE INDEX entity_scope IF NOT EXISTS FOR (e:Entity) ON (e.scope_key)",
    ),
    _unscoped(
        "INDEX_ENTITY_NAME",
        "CREATE INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON (e.normalized_name)",
    ),
    _unscoped(
        "INDEX_ENTITY_NAME_KEY",
        "CREATE INDEX entity_name_key IF NOT EXISTS FOR (e:Entity) ON (e.scope_key, e.name_key)",
    ),
    _unscoped(
        "INDEX_MERGED_ENTITY",
        "CREATE INDEX merged_entity IF NOT EXISTS "
        "FOR (m:MergedEntity) ON (m.scope_key, m.merge_id)",
    ),
    _unscoped(
        "INDEX_MERGED_ENTITY_SCOPE",
        "CREATE INDEX merged_entity_scope IF NOT EXISTS FOR (m:MergedEntity) ON (m.scope_key)",
    ),
    _unscoped(
        "INDEX_ENTITY_MERGE_SCOPE",
        "CREATE INDEX entity_merge_scope IF NOT EXISTS FOR (r:EntityMerge) ON (r.scope_key)",
    ),
    _unscoped(
        "INDEX_FACT_PAIR_SCOPE",
        "CREATE INDEX fact_pair_scope IF NOT EXISTS FOR (p:FactPair) ON (p.scope_key)",
    ),
    _unscoped(
        "INDEX_FACT_PAIR_OLDER",
        "CREATE INDEX fact_pair_older IF NOT EXISTS FOR (p:FactPair) ON (p.scope_key, p.older_id)",
    ),
    _unscoped(
        "INDEX_FACT_PAIR_NEWER",
        "CREATE INDEX fact_pair_newer IF NOT EXISTS FOR (p:FactPair) ON (p.scope_key, p.newer_id)",
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
        "INDEX_FACT_WRITER",
        "CREATE INDEX fact_writer IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.scope_key, f.writer_key)",
    ),
    # What one person wrote in any scope (``writer_key``), found by erasure across scopes.
    *(
        _unscoped(f"INDEX_{label.upper()}_WRITER", text)
        for label, text in (
            ("memory", "CREATE INDEX memory_writer IF NOT EXISTS FOR (n:Memory) ON (n.writer_key)"),
            (
                "memory_version",
                "CREATE INDEX memory_version_writer IF NOT EXISTS "
                "FOR (n:MemoryVersion) ON (n.writer_key)",
            ),
            (
                "document",
                "CREATE INDEX document_writer IF NOT EXISTS FOR (n:Document) ON (n.writer_key)",
            ),
            ("chunk", "CREATE INDEX chunk_writer IF NOT EXISTS FOR (n:Chunk) ON (n.writer_key)"),
            (
                "chunk_version",
                "CREATE INDEX chunk_version_writer IF NOT EXISTS "
                "FOR (n:ChunkVersion) ON (n.writer_key)",
            ),
            (
                "document_revision",
                "CREATE INDEX document_revision_writer IF NOT EXISTS "
                "FOR (n:DocumentRevision) ON (n.writer_key)",
            ),
            ("entity", "CREATE INDEX entity_writer IF NOT EXISTS FOR (n:Entity) ON (n.writer_key)"),
            (
                "merged_entity",
                "CREATE INDEX merged_entity_writer IF NOT EXISTS "
                "FOR (n:MergedEntity) ON (n.writer_key)",
            ),
            (
                "entity_merge",
                "CREATE INDEX entity_merge_writer IF NOT EXISTS "
                "FOR (n:EntityMerge) ON (n.writer_key)",
            ),
            (
                "fact_any",
                "CREATE INDEX fact_any_writer IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.writer_key)",
            ),
        )
    ),
    # The few facts several writers asserted without a source, found by erasure.
    _unscoped(
        "INDEX_FACT_CO_WRITTEN",
        "CREATE INDEX fact_co_written IF NOT EXISTS "
        "FOR ()-[f:FACT]-() ON (f.scope_key, f.co_written)",
    ),
    _unscoped(
        "INDEX_FACT_LEGACY_SOURCE",
        "CREATE INDEX fact_legacy_source IF NOT EXISTS FOR ()-[f:FACT]-() ON (f.source_chunk_id)",
    ),
    _unscoped(
        "INDEX_SOURCE_FACT",
        "CREATE INDEX source_fact IF NOT EXISTS FOR (x:Source) ON (x.scope_key, x.fact_id)",
    ),
    _unscoped(
        "INDEX_SOURCE_ORIGIN",
        "CREATE INDEX source_origin IF NOT EXISTS FOR (x:Source) ON (x.scope_key, x.origin_key)",
    ),
    _unscoped(
        "INDEX_SOURCE_DOCUMENT",
        "CREATE INDEX source_document IF NOT EXISTS FOR (x:Source) ON (x.scope_key, x.document_id)",
    ),
    _unscoped(
        "INDEX_ERASURE_SCOPE",
        "CREATE INDEX erasure_scope IF NOT EXISTS FOR (e:Erasure) ON (e.scope_key)",
    ),
    _unscoped(
        "INDEX_PENDING_SCOPE",
        "CREATE INDEX pending_scope IF NOT EXISTS FOR (p:PendingSpan) ON (p.scope_key)",
    ),
    _unscoped(
        "INDEX_PENDING_QUEUE",
        "CREATE INDEX pending_queue IF NOT EXISTS "
        "FOR (p:PendingSpan) ON (p.status, p.lease_expires_at)",
    ),
    _unscoped(
        "INDEX_PENDING_SCOPE_STATUS",
        "CREATE INDEX pending_scope_status IF NOT EXISTS "
        "FOR (p:PendingSpan) ON (p.scope_key, p.status)",
    ),
)

# Vector indexes (cosine, unquantized so the score returned is the raw cosine similarity) are
# made per embedding slot by ``cypher/embedding_slots.py``, for the model the slot holds.

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

# Full-text indexes of earlier versions (Lucene-ranked, before scope-local BM25): nothing reads
# them, so a database upgraded in place stops paying for them on every write.
DROP_RETIRED = (
    _unscoped("DROP_RETIRED_MEMORY_TEXT", "DROP INDEX memory_text IF EXISTS"),
    _unscoped("DROP_RETIRED_CHUNK_TEXT", "DROP INDEX chunk_text IF EXISTS"),
    _unscoped("DROP_RETIRED_FACT_TEXT", "DROP INDEX fact_text IF EXISTS"),
)

# An index whose name is ours but whose shape is not (made by an earlier version: ``IF NOT
# EXISTS`` keeps it as it was) is dropped by name and made again.
DROP_INDEX = _unscoped("DROP_INDEX", "DROP INDEX $name IF EXISTS")

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

# Facts written before sources became ``:Source`` nodes kept one quote in ``f.source_*``:
# each becomes a source (its origin is the quoted chunk's scope when the chunk still exists),
# a bounded batch per call, run at start-up until none is left.
MIGRATE_FACT_SOURCES = _unscoped(
    "MIGRATE_FACT_SOURCES",
    """
MATCH ()-[f:FACT]->()
WHERE f.source_chunk_id IS NOT NULL
WITH f LIMIT 1000
OPTIONAL MATCH (c:Chunk {id: f.source_chunk_id})
WITH f, coalesce(c.scope_key, f.scope_key) AS origin, c
MERGE (x:Source {scope_key: f.scope_key, fact_id: f.id,
                 key: origin + ':' + f.source_chunk_id + ':' + toString(f.source_start) + ':'
                      + toString(f.source_end)})
ON CREATE SET x.tenant_id = f.tenant_id, x.scope = f.scope, x.owner_id = f.owner_id,
              x.chunk_id = f.source_chunk_id, x.document_id = c.document_id,
              x.origin_key = origin, x.origin_scope = c.scope, x.start = f.source_start,
              x.end = f.source_end, x.text = f.source_text, x.created_at = f.created_at,
              x.session_id = f.session_id, x.run_id = f.run_id, x.agent_name = f.agent_name,
              x.model = f.model, x.origin = f.origin
REMOVE f.source_chunk_id, f.source_start, f.source_end, f.source_text
RETURN count(*) AS migrated
""",
)

# Sources written before quotes were withheld (``resolvers.quotes``) may hold the whole text
# of a span from another scope. Each is decided once (``shared`` is set either way): its text
# stays only when the fact's text or names contain it (case-insensitively), as a new write
# would decide; the span itself is untouched in its own scope. Bounded batches at start-up.
WITHHOLD_FOREIGN_QUOTES = _unscoped(
    "WITHHOLD_FOREIGN_QUOTES",
    """
MATCH (x:Source)
WHERE x.shared IS NULL AND x.origin_key IS NOT NULL AND x.origin_key <> x.scope_key
WITH x LIMIT 1000
OPTIONAL MATCH (s:Entity)-[f:FACT {scope_key: x.scope_key, id: x.fact_id}]->(o:Entity)
WITH x, toLower(trim(coalesce(x.text, ''))) AS quote,
     [t IN [f.text, s.name, o.name] WHERE t IS NOT NULL | toLower(t)] AS said
WITH x, quote <> '' AND any(t IN said WHERE t CONTAINS quote) AS keep
SET x.shared = keep, x.text = CASE WHEN keep THEN x.text ELSE null END
RETURN count(*) AS migrated
""",
)


# Our Neo4j extension (local/neo4j/extension): whether the server lists it (asking an absent
# procedure is an error, listing is not), then its version, read once at start-up.
EXTENSION_LISTED = _unscoped(
    "EXTENSION_LISTED",
    "SHOW PROCEDURES YIELD name WHERE name = 'palimpsest.version' RETURN count(*) AS n",
)
EXTENSION_VERSION = _unscoped(
    "EXTENSION_VERSION", "CALL palimpsest.version() YIELD version RETURN version"
)
