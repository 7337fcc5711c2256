"""Entity graph: ``:Entity`` nodes and bi-temporal ``[:FACT]`` relationships between them.

A fact's sources are ``:Source`` nodes in the fact's own scope, keyed by ``(fact_id, key)``
where ``key`` names the quoted span (origin scope, chunk, start, end); a fact is attested by
all of them and goes only with the last. ``origin_key`` is the scope key of the quoted chunk,
so a user's sources can be found (and withdrawn) in the tenant scope without a relationship
ever crossing scopes. A source quoting another scope holds its ``text`` only when ``shared``
is true (``resolvers.quotes``); otherwise it is a bare reference. A fact with no source
carries its writer's USER scope key (``writer_key``): it belongs to that writer, and to every
other writer who asserted it again without a source (``co_writer_keys``).

A fact's validity read follows docs/spec.md, Time. ``$as_of`` is always bound (``now`` by
default). ``$known_at`` is optional: when bound, only facts recorded by then count, and a
fact whose ``invalid_at`` was changed later (by a correction or retraction) is read with the
interval believed at that time (``prior_invalid_at``).
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.quotas import BOUNDS, RAISE_COMPUTED
from palimpsest.cypher.terms import APPLY_TERMS

# The end a fact had at transaction time ``$known_at``. Every change of a fact's end (a
# closure, a supersession, a retraction, a re-assertion that closes it) is a new version: the
# end it replaced goes to ``prior_ends`` (``$open_end`` standing for "open") and the change's
# time to ``ends_changed_at``; ``invalid_changed_at`` is the last change's time. Facts changed
# before versions were kept hold one prior end only (``prior_invalid_at``).
_INVALID_AT: LiteralString = """(CASE
    WHEN $known_at IS NULL OR f.invalid_changed_at IS NULL
         OR f.invalid_changed_at <= $known_at THEN f.invalid_at
    WHEN f.ends_changed_at IS NULL THEN f.prior_invalid_at
    ELSE nullif([i IN range(0, size(f.ends_changed_at) - 1)
                 WHERE f.ends_changed_at[i] > $known_at | f.prior_ends[i]][0], $open_end)
    END)"""

# The start a fact held from at transaction time ``$known_at``: its ``valid_at``, unless a
# bounded value of another object ends inside the period a dated start names
# (``palimpsest.ontology.reconcile``, docs/decisions/0009): then ``held_from``, later. Each
# change keeps the start it replaced in ``prior_starts`` and its time in ``starts_changed_at``.
_VALID_FROM: LiteralString = """(CASE
    WHEN f.held_from IS NULL THEN f.valid_at
    WHEN $known_at IS NULL OR f.starts_changed_at[-1] <= $known_at THEN f.held_from
    ELSE [i IN range(0, size(f.starts_changed_at) - 1)
          WHERE f.starts_changed_at[i] > $known_at | f.prior_starts[i]][0]
    END)"""

# The whole read filter on a fact bound as ``f``. ``$known_at`` bounds ``created_at`` whatever
# ``$include_retired`` says; a retired fact still answers about the past at every known_at
# after its retirement, with the end it was given then.
FACT_VISIBLE: LiteralString = (
    """($known_at IS NULL OR f.created_at <= $known_at)
  AND ($include_retired OR (
    ("""
    + _VALID_FROM
    + " IS NULL OR "
    + _VALID_FROM
    + """ <= $as_of)
    AND ("""
    + _INVALID_AT
    + " IS NULL OR "
    + _INVALID_AT
    + """ > $as_of)))
  AND ($include_refuted OR coalesce(f.confidence, 1.0) >= $min_confidence)"""
)

_FACT_MAP: LiteralString = """f {.id, .scope, .predicate, .text, .natural_key, .observed_at,
   .valid_at, .invalid_at, .created_at, .expired_at, .supersedes, .superseded_by, .confidence,
   .verdict, .judge_reason, .judged_by, .judged_at, .tenant_id, .session_id, .run_id,
   .agent_name, .model, .origin, .writer_id, .compaction_generation, .prior_ends, .ends_changed_at,
   .prior_invalid_at, .invalid_changed_at, .closed_reason}"""
_ENTITY_FIELDS: LiteralString = """{.id, .type, .name, .aliases, .tenant_id, .session_id,
   .run_id, .agent_name, .model, .origin, .writer_id, .compaction_generation}"""
_SOURCES: LiteralString = """COLLECT { MATCH (x:Source {scope_key: $scope_key, fact_id: f.id})
          RETURN x {.chunk_id, .document_id, .start, .end, .text, .origin_scope, .created_at,
                    .origin}
          ORDER BY x.created_at, x.key }"""
# Deletes the fact pairs (``cypher/conflicts.py``) that name ``f``: every statement that
# deletes a fact runs it first, so a pair never outlives either of its facts.
DROP_PAIRS_OF_F: LiteralString = """CALL (f) {
  OPTIONAL MATCH (p:FactPair {scope_key: $scope_key, older_id: f.id})
  OPTIONAL MATCH (n:FactPair {scope_key: $scope_key, newer_id: f.id})
  WITH collect(DISTINCT p) + collect(DISTINCT n) AS pairs
  FOREACH (x IN pairs | DELETE x)
}
"""
# A fact as the columns ``fact_from`` reads (``fact``, ``subject``, ``object``, ``sources``),
# and the same as one map (for statements that collect several facts into one column).
FACT_COLUMNS: LiteralString = (
    "\n"
    + _FACT_MAP
    + " AS fact,\ns "
    + _ENTITY_FIELDS
    + " AS subject,\no "
    + _ENTITY_FIELDS
    + " AS object,\n"
    + _SOURCES
    + " AS sources\n"
)
FACT_ROW: LiteralString = (
    "{fact: "
    + _FACT_MAP
    + ",\n subject: s "
    + _ENTITY_FIELDS
    + ",\n object: o "
    + _ENTITY_FIELDS
    + ",\n sources: "
    + _SOURCES
    + "}"
)

KEY_CONFLICTS = Statement(
    "KEY_CONFLICTS",
    """
UNWIND $facts AS item
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, natural_key: item.natural_key}]->(o:Entity)
WHERE s.type <> item.subject_type OR s.normalized_name <> item.subject_norm
   OR o.type <> item.object_type OR o.normalized_name <> item.object_norm
   OR f.predicate <> item.predicate
RETURN item.natural_key AS natural_key
""",
)

# A writer other than the fact's own asserting it again without a source is one more of its
# asserters (``co_writer_keys``; ``co_written`` marks such facts for the index erasure finds
# them by): the fact is theirs too, so no one asserter's erasure takes it from the others.
_CO_WRITER: LiteralString = """(item.source_key IS NULL AND $writer_key IS NOT NULL
    AND coalesce(f.writer_key, '') <> $writer_key
    AND NOT $writer_key IN coalesce(f.co_writer_keys, []))"""

# One statement writes a batch: both entities, the fact, its source and the chunk's mention
# edges, all in the same scope. Re-asserting keeps created_at and never revives a retired fact;
# it may only close an open interval, which is recorded like a retraction (the prior end was
# open). Re-asserting from another span adds that span as a further source.
#
# Then, in the same statement, what the batch created is counted, as a conditional write
# with a verdict (``counted``): the resolver sends the natural keys it expects created
# (``$expected``: those the lock statement proved no stored fact holds) with the term
# statistics of those facts (``$changes`` on ``$shard``, cypher/terms.py). When the facts
# created are exactly those, the statistics are applied and the scope's counters raised, by
# the facts created and by the entities created with one of the batch's minted ids
# (``$minted``), when they fit (``fits``, cypher/quotas.py ``RAISE``). Otherwise nothing more
# is written (``counted`` false) and the resolver applies what was created in a statement of
# its own (``APPLY_TERMS_RAISE_COUNTERS``), as before this fold. The scope node is locked
# already (``LOCK_RESOLVE_ENTITIES`` ran first in the transaction); the term statistics are
# written before it, in term order, as the statement this replaced wrote them.
ASSERT_FACTS = Statement(
    "ASSERT_FACTS",
    """CYPHER 25
UNWIND $facts AS item
MERGE (s:Entity {scope_key: $scope_key, type: item.subject_type,
                 normalized_name: item.subject_norm})
ON CREATE SET s:$(item.subject_label), s.id = item.subject_id, s.name = item.subject_name,
              s.name_key = item.subject_key, s.created_at = $now,
              s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.session_id = $session_id, s.run_id = $run_id, s.agent_name = $agent_name,
              s.model = $model, s.origin = $origin, s.writer_id = $writer_id,
              s.writer_key = $writer_key
MERGE (o:Entity {scope_key: $scope_key, type: item.object_type,
                 normalized_name: item.object_norm})
ON CREATE SET o:$(item.object_label), o.id = item.object_id, o.name = item.object_name,
              o.name_key = item.object_key, o.created_at = $now,
              o.tenant_id = $tenant_id, o.scope = $scope, o.owner_id = $owner_id,
              o.session_id = $session_id, o.run_id = $run_id, o.agent_name = $agent_name,
              o.model = $model, o.origin = $origin, o.writer_id = $writer_id,
              o.writer_key = $writer_key
MERGE (s)-[f:FACT {scope_key: $scope_key, natural_key: item.natural_key}]->(o)
ON CREATE SET f.id = item.id, f.lineage = item.id, f.predicate = item.predicate,
              f.predicate_key = item.predicate_key,
              f.text = item.text, f.embedding = item.embedding,
              f += coalesce(item.embedding_dual, {}), f.ft = item.ft,
              f.ft_tf = item.ft_tf, f.ft_len = item.ft_len, f.years = item.years,
              f.has_time = item.has_time,
              f.observed_at = item.observed_at, f.valid_at = item.valid_at,
              f.invalid_at = item.invalid_at, f.created_at = $now, f.writer_key = $writer_key,
              f.writer_id = $writer_id,
              f.tenant_id = $tenant_id, f.scope = $scope, f.owner_id = $owner_id,
              f.session_id = $session_id, f.run_id = $run_id, f.agent_name = $agent_name,
              f.model = $model, f.origin = $origin,
              f.compaction_generation = item.compaction_generation,
              f.judged_by = item.judged_by,
              f.judged_at = CASE WHEN item.judged_by IS NULL THEN null ELSE $now END
ON MATCH SET
  f.co_written = CASE WHEN """
    + _CO_WRITER
    + """ THEN true ELSE f.co_written END,
  f.co_writer_keys = CASE WHEN """
    + _CO_WRITER
    + """
    THEN coalesce(f.co_writer_keys, []) + $writer_key ELSE f.co_writer_keys END,
  f.prior_ends = CASE WHEN f.expired_at IS NULL AND f.invalid_at IS NULL
    AND item.invalid_at IS NOT NULL THEN coalesce(f.prior_ends, []) + [$open_end]
    ELSE f.prior_ends END,
  f.ends_changed_at = CASE WHEN f.expired_at IS NULL AND f.invalid_at IS NULL
    AND item.invalid_at IS NOT NULL THEN coalesce(f.ends_changed_at, []) + [$now]
    ELSE f.ends_changed_at END,
  f.invalid_changed_at = CASE WHEN f.expired_at IS NULL AND f.invalid_at IS NULL
    AND item.invalid_at IS NOT NULL THEN $now ELSE f.invalid_changed_at END,
  f.invalid_at = CASE WHEN f.expired_at IS NULL AND f.invalid_at IS NULL
    AND item.invalid_at IS NOT NULL THEN item.invalid_at ELSE f.invalid_at END
WITH s, o, f, item, f.created_at = $now AS created
OPTIONAL MATCH (c:Chunk {scope_key: $scope_key, id: item.mention_chunk_id})
FOREACH (_ IN CASE WHEN c IS NULL THEN [] ELSE [1] END |
  MERGE (c)-[ms:MENTIONS {scope_key: $scope_key}]->(s)
  ON CREATE SET ms.start = item.source_start, ms.end = item.source_end)
FOREACH (_ IN CASE WHEN c IS NULL OR item.object_is_value THEN [] ELSE [1] END |
  MERGE (c)-[mo:MENTIONS {scope_key: $scope_key}]->(o)
  ON CREATE SET mo.start = item.source_start, mo.end = item.source_end)
FOREACH (_ IN CASE WHEN item.source_key IS NULL THEN [] ELSE [1] END |
  MERGE (x:Source {scope_key: $scope_key, fact_id: f.id, key: item.source_key})
  ON CREATE SET x.tenant_id = $tenant_id, x.scope = $scope, x.owner_id = $owner_id,
                x.chunk_id = item.source_chunk_id, x.document_id = item.source_document_id,
                x.origin_key = item.origin_key, x.origin_scope = item.origin_scope,
                x.start = item.source_start, x.end = item.source_end,
                x.text = item.source_text, x.shared = item.source_shared,
                x.created_at = $now, x.session_id = $session_id,
                x.run_id = $run_id, x.agent_name = $agent_name, x.model = $model,
                x.origin = $origin)
WITH s, o, f, item, created
WITH collect({index: item.index, created: created, key: item.natural_key,
              subject_new: s.created_at = $now, object_new: o.created_at = $now,
              row: """
    + FACT_ROW
    + """}) AS written
MATCH (s:Scope {scope_key: $scope_key})
WITH s, written,
     COLLECT { UNWIND written AS w
               WITH w WHERE w.created
               RETURN DISTINCT w.key AS k } AS made,
     COLLECT { UNWIND written AS w
               UNWIND [e IN [[w.subject_new, w.row.subject.id], [w.object_new, w.row.object.id]]
                       WHERE e[0] | e[1]] AS id
               WITH DISTINCT id WHERE id IN $minted
               RETURN id } AS entities
WITH s, written, made, entities,
     size(made) = size($expected) AND all(k IN made WHERE k IN $expected) AS counted
CALL (counted) {
  UNWIND CASE WHEN counted THEN $changes ELSE [] END AS d"""
    + APPLY_TERMS
    + """}
WITH s, written, counted,
     [c IN [{counter: $fact_counter, n: size(made), limit: $fact_limit},
            {counter: $entity_counter, n: size(entities), limit: $entity_limit}]
      WHERE counted AND c.n > 0] AS added
WITH s, written, counted, added"""
    + RAISE_COMPUTED
    + """
WITH s, written, counted, fits
UNWIND written AS w
RETURN w.index AS index, w.created AS created, w.subject_new AS subject_new,
       w.object_new AS object_new, w.row.fact AS fact, w.row.subject AS subject,
       w.row.object AS object, w.row.sources AS sources, counted, fits, """
    + BOUNDS,
)

CHUNK_TEXTS = Statement(
    "CHUNK_TEXTS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.id IN $ids AND c.index IS NOT NULL
RETURN c.id AS id, c.text AS text, c.document_id AS document_id
""",
)

# Keyset paging in LIST_FACTS order: (valid_at, created_at, id), where an undated fact
# (valid_at null) sorts after every dated one. No cursor: $after_id is null.
_AFTER_FACT: LiteralString = """($after_id IS NULL
    OR (f.valid_at IS NULL AND $after_valid_at IS NOT NULL)
    OR f.valid_at > $after_valid_at
    OR ((f.valid_at = $after_valid_at OR (f.valid_at IS NULL AND $after_valid_at IS NULL))
        AND (f.created_at > $after_created_at
             OR (f.created_at = $after_created_at AND f.id > $after_id))))"""

# The tail both fact lists share: visible facts after the cursor, one page in time order.
_VISIBLE_PAGE: LiteralString = (
    FACT_VISIBLE
    + """
  AND """
    + _AFTER_FACT
    + """
RETURN"""
    + FACT_COLUMNS
    + """
ORDER BY f.valid_at, f.created_at, f.id
LIMIT $limit
"""
)

LIST_FACTS = Statement(
    "LIST_FACTS",
    """
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key}]->(o:Entity)
WHERE ($subject_norm IS NULL OR s.normalized_name = $subject_norm)
  AND ($subject_type IS NULL OR s.type = $subject_type)
  AND ($predicate IS NULL OR f.predicate = $predicate)
  AND """
    + _VISIBLE_PAGE,
)

# ``LIST_FACTS`` of one subject named as a write names it (cypher/entities.py
# ``RESOLVE_ENTITIES``): in each type (or the one asked), the entity whose normalised name is
# the name, else whose folded name (``$subject_key``) is, else one of whose aliases folds the
# same (a merged-away spelling is an alias of the kept entity); lowest id first.
LIST_SUBJECT_FACTS = Statement(
    "LIST_SUBJECT_FACTS",
    """
CALL () {
  MATCH (e:Entity {scope_key: $scope_key, normalized_name: $subject_norm})
  WHERE $subject_type IS NULL OR e.type = $subject_type
  RETURN e, 0 AS rank
  UNION
  MATCH (e:Entity {scope_key: $scope_key, name_key: $subject_key})
  WHERE $subject_type IS NULL OR e.type = $subject_type
  RETURN e, 1 AS rank
  UNION
  MATCH (e:Entity {scope_key: $scope_key})
  WHERE e.alias_keys IS NOT NULL AND $subject_key IN e.alias_keys
    AND ($subject_type IS NULL OR e.type = $subject_type)
  RETURN e, 2 AS rank
}
WITH e ORDER BY rank, e.id
WITH e.type AS type, collect(e)[0] AS s
MATCH (s)-[f:FACT {scope_key: $scope_key}]->(o:Entity)
WHERE ($predicate IS NULL OR f.predicate = $predicate)
  AND """
    + _VISIBLE_PAGE,
)

GET_FACT = Statement(
    "GET_FACT",
    """
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, id: $id}]->(o:Entity)
RETURN"""
    + FACT_COLUMNS,
)

FACT_HISTORY = Statement(
    "FACT_HISTORY",
    """
MATCH ()-[g:FACT {scope_key: $scope_key, id: $id}]->()
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, lineage: g.lineage}]->(o:Entity)
RETURN"""
    + FACT_COLUMNS
    + """
ORDER BY f.created_at, f.id
""",
)

# Taking both write locks first makes the retire-once check and the write atomic.
LOCK_PAIR = Statement(
    "LOCK_PAIR",
    """
MATCH ()-[a:FACT {scope_key: $scope_key, id: $old_id}]->()
MATCH ()-[b:FACT {scope_key: $scope_key, id: $new_id}]->()
SET a.locked_at = $now, b.locked_at = $now
RETURN a.superseded_by AS a_superseded_by, a.valid_at AS a_valid_at,
       b.supersedes AS b_supersedes, b.expired_at AS b_expired_at, b.valid_at AS b_valid_at
""",
)

SUPERSEDE = Statement(
    "SUPERSEDE",
    """
MATCH ()-[a:FACT {scope_key: $scope_key, id: $old_id}]->()
MATCH ()-[b:FACT {scope_key: $scope_key, id: $new_id}]->()
SET a.prior_ends = coalesce(a.prior_ends, []) + [coalesce(a.invalid_at, $open_end)],
    a.ends_changed_at = coalesce(a.ends_changed_at, []) + [$now],
    a.invalid_changed_at = $now
SET a.invalid_at = $invalid_at, a.expired_at = $now,
    a.superseded_by = b.id, b.supersedes = a.id, b.lineage = a.lineage
""",
)

LOCK_FACT = Statement(
    "LOCK_FACT",
    """
MATCH ()-[f:FACT {scope_key: $scope_key, id: $id}]->()
SET f.locked_at = $now
RETURN f.expired_at AS expired_at, f.invalid_changed_at AS invalid_changed_at,
       f.valid_at AS valid_at
""",
)

RETRACT = Statement(
    "RETRACT",
    """
MATCH ()-[f:FACT {scope_key: $scope_key, id: $id}]->()
SET f.prior_ends = coalesce(f.prior_ends, []) + [coalesce(f.invalid_at, $open_end)],
    f.ends_changed_at = coalesce(f.ends_changed_at, []) + [$now],
    f.invalid_changed_at = $now
SET f.invalid_at = $invalid_at
""",
)

JUDGE = Statement(
    "JUDGE",
    """
MATCH ()-[f:FACT {scope_key: $scope_key, id: $id}]->()
SET f.verdict = $verdict, f.confidence = $confidence, f.judge_reason = $reason,
    f.judged_by = $judged_by, f.judged_at = $now
RETURN f.id AS id
""",
)

# Withdraw the sources a chunk scope gave (all of them, or one document's), a bounded batch
# at a time; the facts they supported are then checked by DROP_UNSOURCED_FACTS.
REMOVE_SOURCES = Statement(
    "REMOVE_SOURCES",
    """
MATCH (x:Source {scope_key: $scope_key, origin_key: $origin_key})
WHERE $document_id IS NULL OR x.document_id = $document_id
WITH x LIMIT $batch
WITH collect(x) AS xs, collect(DISTINCT x.fact_id) AS fact_ids
FOREACH (x IN xs | DELETE x)
RETURN size(xs) AS sources, fact_ids
""",
)

# A fact goes with its last source: of the given facts, those left without any are deleted
# (unless someone also asserted it without a source, see ``_CO_WRITER``);
# ``indexed`` is what their full-text representation added to the scope's term statistics.
DROP_UNSOURCED_FACTS = Statement(
    "DROP_UNSOURCED_FACTS",
    """
UNWIND $fact_ids AS id
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, id: id}]->(o:Entity)
WHERE NOT EXISTS { MATCH (x:Source {scope_key: $scope_key, fact_id: id}) }
  AND f.co_written IS NULL
WITH f, s.id AS sid, o.id AS oid,
     CASE WHEN f.ft_len IS NULL THEN null
          ELSE {ft: f.ft, ft_tf: f.ft_tf, speaker: f.speaker} END AS indexed
"""
    + DROP_PAIRS_OF_F
    + """DELETE f
RETURN count(*) AS facts, collect(DISTINCT sid) + collect(DISTINCT oid) AS entity_ids,
       collect(indexed) AS indexed
""",
)

# Serialises the scope's writers of single-valued facts (docs/spec.md, Reconciliation): the
# closure reads the stored timeline and writes its closures under this lock, so concurrent
# writers of one subject and predicate cannot leave two current values. The write's time is
# taken under the lock, never before the scope's last closing write's.
# A fragment too (ending with ``now`` bound), so a fact write takes the lock in the statement
# that resolves its names (cypher/entities.py ``LOCK_RESOLVE_ENTITIES``).
LOCK_FACTS: LiteralString = """
MERGE (s:Scope {scope_key: $scope_key})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.created_at = $now
SET s.facts_lock = $now
WITH s
WITH s, CASE WHEN s.facts_touched_at > $now THEN s.facts_touched_at ELSE $now END AS now
SET s.facts_touched_at = now
"""

LOCK_SCOPE_FACTS = Statement("LOCK_SCOPE_FACTS", LOCK_FACTS + "RETURN now\n")

# Every fact of one subject whose predicate is one of the group's spellings: the timeline the
# closure computes over. ``start`` is the fact's valid_at, else observed_at, else created_at;
# ``valid_at`` says whether it was stated (only a stated start names a period).
CLOSURE_TIMELINES = Statement(
    "CLOSURE_TIMELINES",
    """
UNWIND $groups AS g
MATCH (s:Entity {scope_key: $scope_key, type: g.subject_type, normalized_name: g.subject_norm})
MATCH (s)-[f:FACT {scope_key: $scope_key}]->(o:Entity)
WHERE coalesce(f.predicate_key, toLower(f.predicate)) IN g.spellings
RETURN g.group AS group, f.id AS id, o.type AS object_type, o.normalized_name AS object_norm,
       coalesce(f.valid_at, f.observed_at, f.created_at) AS start, f.valid_at AS valid_at,
       f.observed_at AS observed_at,
       f.natural_key AS natural_key, f.invalid_at AS end,
       CASE WHEN f.prior_ends IS NULL THEN f.invalid_at ELSE f.prior_ends[0] END AS stated_end,
       f.held_from AS held_from
""",
)

# The (subject, predicate) timelines of stored facts: what an import closes over.
FACT_TIMELINE_KEYS = Statement(
    "FACT_TIMELINE_KEYS",
    """
UNWIND $ids AS id
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, id: id}]->(:Entity)
RETURN DISTINCT s.type AS subject_type, s.normalized_name AS subject_norm,
       f.predicate AS predicate
""",
)

# A fact holds only from a later instant than its start
# (``palimpsest.ontology.reconcile.held_from``): a new version of its start, as
# ``CLOSE_FACTS`` keeps those of its end.
HOLD_FACTS_FROM = Statement(
    "HOLD_FACTS_FROM",
    """
UNWIND $held AS h
MATCH ()-[f:FACT {scope_key: $scope_key, id: h.id}]->()
SET f.prior_starts = coalesce(f.prior_starts, []) + [coalesce(f.held_from, f.valid_at)],
    f.starts_changed_at = coalesce(f.starts_changed_at, []) + [$now],
    f.held_from = h.held_from
RETURN count(*) AS held
""",
)

# Close each fact where the fact that replaces it starts: a new version of its end, retired
# (expired_at) once, linked both ways.
CLOSE_FACTS = Statement(
    "CLOSE_FACTS",
    """
UNWIND $closures AS c
MATCH ()-[f:FACT {scope_key: $scope_key, id: c.id}]->()
MATCH ()-[b:FACT {scope_key: $scope_key, id: c.by_id}]->()
SET f.prior_ends = coalesce(f.prior_ends, []) + [coalesce(f.invalid_at, $open_end)],
    f.ends_changed_at = coalesce(f.ends_changed_at, []) + [$now],
    f.invalid_changed_at = $now
SET f.invalid_at = c.invalid_at, f.expired_at = coalesce(f.expired_at, $now),
    f.superseded_by = b.id, f.closed_reason = c.reason,
    b.supersedes = coalesce(b.supersedes, f.id)
RETURN count(*) AS closed
""",
)

FACTS_BY_ID = Statement(
    "FACTS_BY_ID",
    """
UNWIND $ids AS id
MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, id: id}]->(o:Entity)
RETURN"""
    + FACT_COLUMNS,
)
