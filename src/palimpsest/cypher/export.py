"""Export (right of access) and import of one person's data, a bounded page at a time.

Readers page by a stable key (``> $after``, ``LIMIT $limit``) and return each row's own
properties as ``[key, value]`` pairs, leaving out ``$skip`` (embeddings, recomputed on import,
and the scope stamps, which the importing scope sets). Writers set those pairs back and stamp
the scope from the handle, so an import lands in exactly the scope it was given; a row of the
person's own scope takes its writer from the handle too (``_own``), so a file cannot name
another writer.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement


def _props(var: LiteralString) -> LiteralString:
    return "[k IN keys(" + var + ") WHERE NOT k IN $skip | [k, " + var + "[k]]]"


def _stamp(v: LiteralString) -> LiteralString:
    return (
        v
        + ".tenant_id = $tenant_id, "
        + v
        + ".scope = $scope, "
        + v
        + ".owner_id = $owner_id, "
        + v
        + ".scope_key = $scope_key"
    )


def _own(v: LiteralString) -> LiteralString:
    """The scope stamps of a row of the person's own scope, and its writer: the person the
    handle names, never the file's (a row that names no writer keeps none)."""
    return (
        _stamp(v)
        + "\nSET "
        + v
        + ".writer_id = CASE WHEN "
        + v
        + ".writer_id IS NULL THEN null ELSE $owner_id END, "
        + v
        + ".writer_key = CASE WHEN "
        + v
        + ".writer_key IS NULL THEN null ELSE $scope_key END"
    )


def _rows(label: LiteralString, v: LiteralString, key: LiteralString) -> LiteralString:
    """One page of a scope's ``label`` nodes by ``key``, each with its own properties."""
    return (
        "\nMATCH ("
        + v
        + ":"
        + label
        + " {scope_key: $scope_key}) WHERE "
        + v
        + "."
        + key
        + " > $after\nWITH "
        + v
        + " ORDER BY "
        + v
        + "."
        + key
        + " LIMIT $limit\nRETURN "
        + v
        + "."
        + key
        + " AS cursor, "
        + _props(v)
        + " AS props"
    )


EXPORT_MEMORY = Statement(
    "EXPORT_MEMORY",
    _rows("Memory", "m", "key"),
)

# Past versions and tombstones of notes, in a stable order (their ids).
EXPORT_MEMORY_VERSIONS = Statement(
    "EXPORT_MEMORY_VERSIONS",
    _rows("MemoryVersion", "v", "id"),
)

EXPORT_DOCUMENTS = Statement(
    "EXPORT_DOCUMENTS",
    _rows("Document", "d", "id"),
)

EXPORT_CHUNKS = Statement(
    "EXPORT_CHUNKS",
    """
MATCH (c:Chunk {scope_key: $scope_key}) WHERE c.id > $after
WITH c ORDER BY c.id LIMIT $limit
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key})-[:HAS_CHILD {scope_key: $scope_key}]->(c)
OPTIONAL MATCH (c)-[:NEXT {scope_key: $scope_key}]->(n:Chunk {scope_key: $scope_key})
RETURN c.id AS cursor, """
    + _props("c")
    + """ AS props, p.id AS parent_id, n.id AS next_id""",
)

# Closed chunk versions (docs/decisions/0008-document-revisions.md): no edges, their tree and
# order are in ``parent_id``/``seq``. An id is not unique among versions, so the key is the
# document, the id and the revision the version began at.
EXPORT_CHUNK_VERSIONS = Statement(
    "EXPORT_CHUNK_VERSIONS",
    """
MATCH (v:ChunkVersion {scope_key: $scope_key})
WITH v, v.document_id + "|" + v.id + "|"
        + right("0000000000" + toString(coalesce(v.from_revision, 1)), 10) AS cursor
WHERE cursor > $after
WITH v, cursor ORDER BY cursor LIMIT $limit
RETURN cursor, """
    + _props("v")
    + " AS props",
)

# Each document's revision records (time, author, title, path, preamble, tombstone).
EXPORT_DOCUMENT_REVISIONS = Statement(
    "EXPORT_DOCUMENT_REVISIONS",
    """
MATCH (r:DocumentRevision {scope_key: $scope_key})
WITH r, r.document_id + "|" + right("0000000000" + toString(r.revision), 10) AS cursor
WHERE cursor > $after
WITH r, cursor ORDER BY cursor LIMIT $limit
RETURN cursor, """
    + _props("r")
    + " AS props",
)

# A chunk closed by a revision keeps its mention edges (it is relabelled in place) and a merge
# moves them with the rest: ``version_mentions`` name the version by what keys it in the file
# (document, id, the revision it began at); the present's ``mentions`` stay as they were.
EXPORT_ENTITIES = Statement(
    "EXPORT_ENTITIES",
    """
MATCH (e:Entity {scope_key: $scope_key}) WHERE e.id > $after
WITH e ORDER BY e.id LIMIT $limit
RETURN e.id AS cursor, """
    + _props("e")
    + """ AS props,
  COLLECT { MATCH (c:Chunk {scope_key: $scope_key})-[m:MENTIONS {scope_key: $scope_key}]->(e)
            RETURN {chunk_id: c.id, props: """
    + _props("m")
    + """} AS mention ORDER BY mention.chunk_id } AS mentions,
  COLLECT { MATCH (v:ChunkVersion {scope_key: $scope_key})-[m:MENTIONS {scope_key: $scope_key}]->(e)
            RETURN {document_id: v.document_id, chunk_id: v.id, from_revision: v.from_revision,
                    props: """
    + _props("m")
    + """} AS mention
            ORDER BY mention.document_id, mention.chunk_id, mention.from_revision
  } AS version_mentions""",
)

# Entities a merge set aside (``merge_id``, ``merged_into``) keep their names; they have no
# relationship (the merge moved every fact and mention onto the kept entity).
EXPORT_MERGED_ENTITIES = Statement(
    "EXPORT_MERGED_ENTITIES",
    _rows("MergedEntity", "e", "id"),
)

# The merge records, undone ones included: who merged what, when, and what unmerge needs.
EXPORT_ENTITY_MERGES = Statement(
    "EXPORT_ENTITY_MERGES",
    _rows("EntityMerge", "r", "id"),
)

EXPORT_FACTS = Statement(
    "EXPORT_FACTS",
    """
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key}]->(o:Entity) WHERE f.id > $after
WITH s, f, o ORDER BY f.id LIMIT $limit
RETURN f.id AS cursor, """
    + _props("f")
    + """ AS props, s.id AS subject_id, o.id AS object_id,
  COLLECT { MATCH (x:Source {scope_key: $scope_key, fact_id: f.id})
            RETURN """
    + _props("x")
    + """ AS source ORDER BY x.key } AS sources""",
)

# Pairs of close facts and their verdicts (cypher/conflicts.py); they name the facts by id.
EXPORT_FACT_PAIRS = Statement(
    "EXPORT_FACT_PAIRS",
    _rows("FactPair", "p", "id"),
)

EXPORT_SPANS = Statement(
    "EXPORT_SPANS",
    _rows("PendingSpan", "p", "id"),
)

# The person's share of the tenant scope: facts they attest (with their own sources only)
# and the sourceless facts they wrote.
EXPORT_TENANT_FACTS = Statement(
    "EXPORT_TENANT_FACTS",
    """
CALL () {
  MATCH (x:Source {scope_key: $scope_key, origin_key: $person_key}) WHERE x.fact_id > $after
  RETURN DISTINCT x.fact_id AS fid
  UNION
  MATCH ()-[w:FACT {scope_key: $scope_key, writer_key: $person_key}]->() WHERE w.id > $after
    AND NOT EXISTS { MATCH (y:Source {scope_key: $scope_key, fact_id: w.id}) }
  RETURN w.id AS fid
}
WITH fid ORDER BY fid LIMIT $limit
MATCH (s:Entity {scope_key: $scope_key})-[f:FACT {scope_key: $scope_key, id: fid}]->
      (o:Entity {scope_key: $scope_key})
RETURN f.id AS cursor, """
    + _props("f")
    + """ AS props,
  f.writer_key = $person_key
    AND NOT EXISTS { MATCH (z:Source {scope_key: $scope_key, fact_id: f.id}) } AS written, """
    + _props("s")
    + " AS subject, "
    + _props("o")
    + """ AS object,
  COLLECT { MATCH (x:Source {scope_key: $scope_key, fact_id: f.id, origin_key: $person_key})
            RETURN """
    + _props("x")
    + """ AS source ORDER BY x.key } AS sources""",
)

# -- import: rows of one kind, into the handle's scope ---------------------------------

IMPORT_MEMORY = Statement(
    "IMPORT_MEMORY",
    "UNWIND $rows AS r CREATE (m:Memory) SET m = r.props, m.embedding = r.embedding, "
    "m += coalesce(r.embedding_dual, {}), " + _own("m"),
)

IMPORT_MEMORY_VERSIONS = Statement(
    "IMPORT_MEMORY_VERSIONS",
    "UNWIND $rows AS r CREATE (v:MemoryVersion) SET v = r.props, v.embedding = r.embedding, "
    "v += coalesce(r.embedding_dual, {}), " + _own("v"),
)

IMPORT_DOCUMENTS = Statement(
    "IMPORT_DOCUMENTS",
    "UNWIND $rows AS r CREATE (d:Document) SET d = r.props, " + _own("d"),
)

IMPORT_CHUNKS = Statement(
    "IMPORT_CHUNKS",
    "UNWIND $rows AS r CREATE (c:Chunk) SET c = r.props, c.embedding = r.embedding, "
    "c += coalesce(r.embedding_dual, {}), " + _own("c"),
)

# After every chunk exists: the tree, the roots and reading order, as import draws them.
IMPORT_CHUNK_EDGES = Statement(
    "IMPORT_CHUNK_EDGES",
    """
UNWIND $rows AS r
MATCH (c:Chunk {scope_key: $scope_key, id: r.id})
OPTIONAL MATCH (p:Chunk {scope_key: $scope_key, id: r.parent_id})
OPTIONAL MATCH (n:Chunk {scope_key: $scope_key, id: r.next_id})
OPTIONAL MATCH (d:Document {scope_key: $scope_key, id: c.document_id})
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END |
  CREATE (p)-[:HAS_CHILD {position: c.position, scope_key: $scope_key}]->(c))
FOREACH (_ IN CASE WHEN n IS NULL THEN [] ELSE [1] END |
  CREATE (c)-[:NEXT {scope_key: $scope_key}]->(n))
FOREACH (_ IN CASE WHEN d IS NULL OR c.index IS NOT NULL THEN [] ELSE [1] END |
  CREATE (d)-[:HAS_ROOT {scope_key: $scope_key}]->(c))
""",
)

# Closed versions stay out of every index and the term statistics; their vectors are
# recomputed (a restore and a knownAt recall read them).
IMPORT_CHUNK_VERSIONS = Statement(
    "IMPORT_CHUNK_VERSIONS",
    "UNWIND $rows AS r CREATE (v:ChunkVersion) SET v = r.props, v.embedding = r.embedding, "
    "v += coalesce(r.embedding_dual, {}), " + _own("v"),
)

IMPORT_DOCUMENT_REVISIONS = Statement(
    "IMPORT_DOCUMENT_REVISIONS",
    "UNWIND $rows AS r CREATE (d:DocumentRevision) SET d = r.props, " + _own("d"),
)

# An entity's second label is its type's (``fact_input.type_label``, computed by the caller).
# Its mentions go onto the chunks and closed versions written before it (the caller gives a
# file of minor 3 or older, which has none, empty ``version_mentions``).
IMPORT_ENTITIES = Statement(
    "IMPORT_ENTITIES",
    """CYPHER 25
UNWIND $rows AS r
CREATE (e:Entity) SET e = r.props, e:$(r.label), """
    + _own("e")
    + """
WITH e, r
CALL (e, r) {
  UNWIND r.mentions AS m
  MATCH (c:Chunk {scope_key: $scope_key, id: m.chunk_id})
  CREATE (c)-[x:MENTIONS]->(e) SET x = m.props, x.scope_key = $scope_key
}
CALL (e, r) {
  UNWIND r.version_mentions AS m
  MATCH (v:ChunkVersion {scope_key: $scope_key, document_id: m.document_id, id: m.chunk_id,
                         from_revision: m.from_revision})
  CREATE (v)-[x:MENTIONS]->(e) SET x = m.props, x.scope_key = $scope_key
}
""",
)

# Properties only, like the export: the facts and mentions name them by id in their stacks.
IMPORT_MERGED_ENTITIES = Statement(
    "IMPORT_MERGED_ENTITIES",
    "CYPHER 25 UNWIND $rows AS r CREATE (e:MergedEntity) SET e = r.props, e:$(r.label), "
    + _own("e"),
)

IMPORT_ENTITY_MERGES = Statement(
    "IMPORT_ENTITY_MERGES",
    "UNWIND $rows AS r CREATE (x:EntityMerge) SET x = r.props, " + _own("x"),
)

IMPORT_FACTS = Statement(
    "IMPORT_FACTS",
    """
UNWIND $rows AS r
MATCH (s:Entity {scope_key: $scope_key, id: r.subject_id})
MATCH (o:Entity {scope_key: $scope_key, id: r.object_id})
CREATE (s)-[f:FACT]->(o) SET f = r.props, f.embedding = r.embedding,
    f += coalesce(r.embedding_dual, {}), """
    + _own("f")
    + """
WITH f, r
UNWIND r.sources AS x
CREATE (y:Source) SET y = x, y.fact_id = f.id, """
    + _own("y"),
)

IMPORT_FACT_PAIRS = Statement(
    "IMPORT_FACT_PAIRS",
    "UNWIND $rows AS r CREATE (p:FactPair) SET p = r.props, " + _stamp("p"),
)

IMPORT_SPANS = Statement(
    "IMPORT_SPANS",
    "UNWIND $rows AS r CREATE (p:PendingSpan) SET p = r.props, " + _own("p"),
)

# Tenant facts are shared: entities and the fact are found by their natural keys and only
# created when missing; the person's sources are added to whatever fact is there.
IMPORT_TENANT_FACTS = Statement(
    "IMPORT_TENANT_FACTS",
    """CYPHER 25
UNWIND $rows AS r
OPTIONAL MATCH ()-[old:FACT {scope_key: $scope_key, natural_key: r.props.natural_key}]->()
WITH r, old IS NULL AS fresh
MERGE (s:Entity {scope_key: $scope_key, type: r.subject.type,
                 normalized_name: r.subject.normalized_name})
ON CREATE SET s = r.subject, s:$(r.subject_label), """
    + _stamp("s")
    + """
MERGE (o:Entity {scope_key: $scope_key, type: r.object.type,
                 normalized_name: r.object.normalized_name})
ON CREATE SET o = r.object, o:$(r.object_label), """
    + _stamp("o")
    + """
MERGE (s)-[f:FACT {scope_key: $scope_key, natural_key: r.props.natural_key}]->(o)
ON CREATE SET f = r.props, f.embedding = r.embedding, f += coalesce(r.embedding_dual, {}),
              f.writer_key = r.writer_key,
              f.writer_id = r.writer_id, """
    + _stamp("f")
    + """
WITH f, r, fresh
CALL (f, r) {
  UNWIND r.sources AS x
  MERGE (y:Source {scope_key: $scope_key, fact_id: f.id, key: x.key})
  ON CREATE SET y = x, y.fact_id = f.id, y.origin_key = $person_key, """
    + _stamp("y")
    + """
}
RETURN r.props.natural_key AS natural_key, fresh
""",
)
