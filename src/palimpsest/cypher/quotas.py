"""Per-scope quota counters (docs/reference/quotas.md) on the scope's ``:Scope`` node.

Each counter (``quota_<plane>``) is an upper bound of what the scope stores on that plane:
writers that count add what they created, under the scope node's write lock; deletes leave
it (still an upper bound); a bulk writer that does not count removes it (``FORGET_COUNTERS``;
null: unknown, counted exactly at the next write). A write whose bound stays under the limit
costs one statement (``RAISE_COUNTERS``); near the limit the plane is counted exactly and the
counter set to it.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.terms import APPLY_CHANGES

# The counter properties, one per counted plane (the only property names ``SET s += $counters``
# is ever given: resolvers/tenant/quotas.py builds that map from this tuple).
COUNTERS: tuple[LiteralString, ...] = (
    "quota_notes",
    "quota_document_bytes",
    "quota_chunks",
    "quota_facts",
    "quota_entities",
    "quota_pending_spans",
    "quota_versions",
)

# With the scope node ``s`` locked: raise every counter of ``$added`` when all are known and
# fit (``fits``), else none. A fragment, so a write statement can raise its own counters
# (cypher/memory.py ``WRITE_MEMORY``); ``BOUNDS`` are the columns the resolver decides on.
RAISE: LiteralString = """, all(c IN $added WHERE s[c.counter] IS NOT NULL
                              AND (c.limit = 0 OR s[c.counter] + c.n <= c.limit)) AS fits
FOREACH (c IN CASE WHEN fits THEN $added ELSE [] END | SET s[c.counter] = s[c.counter] + c.n)"""
BOUNDS: LiteralString = """s.quota_notes AS quota_notes,
       s.quota_document_bytes AS quota_document_bytes, s.quota_chunks AS quota_chunks,
       s.quota_facts AS quota_facts, s.quota_entities AS quota_entities,
       s.quota_pending_spans AS quota_pending_spans, s.quota_versions AS quota_versions
"""
# ``RAISE`` of counts a statement computed itself: ``added`` is a variable of the same shape.
RAISE_COMPUTED: LiteralString = RAISE.replace("$added", "added")
RAISE_AND_RETURN: LiteralString = "WITH s" + RAISE + "\nRETURN fits, " + BOUNDS

# Takes the scope node's write lock first, so the counters read are the last committed ones
# and no other counting writer of the scope interleaves until this transaction ends. The lock
# is a parameter's write (``quota_locked_at``): a transaction whose first write of the node
# reads the property it sets, and writes the node again later, deadlocks with another doing
# the same (docs/notes/load.md, "Concurrent writers of one scope"). The
# common case is one statement: every given counter is known and stays within its limit
# (``limit`` 0: none), so each is raised by what the write created (``$added``:
# ``{counter, n, limit}`` maps, counters from ``COUNTERS`` only). Otherwise nothing is raised
# (``fits`` false) and the bounds returned decide.
RAISE_COUNTERS = Statement(
    "RAISE_QUOTA_COUNTERS",
    """
MERGE (s:Scope {scope_key: $scope_key})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.created_at = $now
SET s.quota_locked_at = $now
"""
    + RAISE_AND_RETURN,
)

# The end of a write that created rows (a fact batch): its term statistics (``$changes`` on
# ``$shard``, cypher/terms.py) and its counters' raise, in one round trip, under the scope
# lock the write took first (so the scope node exists).
APPLY_TERMS_RAISE_COUNTERS = Statement(
    "APPLY_TERMS_RAISE_COUNTERS",
    """CYPHER 25
MATCH (s:Scope {scope_key: $scope_key})
CALL () {"""
    + APPLY_CHANGES
    + """}
"""
    + RAISE_AND_RETURN,
)

SET_COUNTERS = Statement(
    "SET_QUOTA_COUNTERS",
    """
MATCH (s:Scope {scope_key: $scope_key})
SET s += $counters
""",
)

FORGET_COUNTERS = Statement(
    "FORGET_QUOTA_COUNTERS",
    """
MATCH (s:Scope {scope_key: $scope_key})
REMOVE s.quota_notes, s.quota_document_bytes, s.quota_chunks, s.quota_facts,
       s.quota_entities, s.quota_pending_spans, s.quota_versions
""",
)

# Exact usage, one plane each (by the scope_key range indexes). Notes count stored notes,
# expired ones included (a sweep removes those); facts count every stored fact, history
# included; pending spans count what is not yet done.
COUNT_NOTES = Statement(
    "COUNT_QUOTA_NOTES", "MATCH (m:Memory {scope_key: $scope_key}) RETURN count(m) AS used"
)
# A document's bytes are its Markdown's UTF-8 bytes (``quota_bytes``, stamped at import);
# documents imported before that count the characters of their chunks.
SUM_DOCUMENT_BYTES = Statement(
    "SUM_QUOTA_DOCUMENT_BYTES",
    """
MATCH (d:Document {scope_key: $scope_key})
RETURN coalesce(sum(coalesce(d.quota_bytes,
         reduce(n = 0, t IN COLLECT { MATCH (c:Chunk {scope_key: $scope_key, document_id: d.id})
                                      RETURN coalesce(c.text, '') } | n + size(t)))), 0) AS used
""",
)
COUNT_CHUNKS = Statement(
    "COUNT_QUOTA_CHUNKS", "MATCH (c:Chunk {scope_key: $scope_key}) RETURN count(c) AS used"
)
COUNT_FACTS = Statement(
    "COUNT_QUOTA_FACTS",
    "MATCH ()-[f:FACT {scope_key: $scope_key}]->() RETURN count(f) AS used",
)
COUNT_ENTITIES = Statement(
    "COUNT_QUOTA_ENTITIES", "MATCH (e:Entity {scope_key: $scope_key}) RETURN count(e) AS used"
)
# Every kept past: note versions and tombstones, past document revisions (a record that is
# not its document's current revision), closed chunk versions: what
# ``PALIMPSEST_MAX_NOTE_VERSIONS`` bounds. Every revision adds one past record.
PAST_VERSIONS: LiteralString = """
COUNT { MATCH (v:MemoryVersion {scope_key: $scope_key}) }
+ COUNT { MATCH (r:DocumentRevision {scope_key: $scope_key})
          WHERE NOT EXISTS { MATCH (d:Document {scope_key: $scope_key, id: r.document_id})
                             WHERE d.revision = r.revision } }
+ COUNT { MATCH (c:ChunkVersion {scope_key: $scope_key}) }"""
COUNT_VERSIONS = Statement("COUNT_QUOTA_VERSIONS", "RETURN " + PAST_VERSIONS + " AS used")
COUNT_PENDING_SPANS = Statement(
    "COUNT_QUOTA_PENDING_SPANS",
    """
MATCH (p:PendingSpan {scope_key: $scope_key})
WHERE p.status <> $done
RETURN count(p) AS used
""",
)

# Which of a batch's freshly minted entity ids this transaction created (an entity the batch
# found already stored keeps its own id and time).
CREATED_ENTITIES = Statement(
    "CREATED_QUOTA_ENTITIES",
    """
UNWIND $ids AS id
MATCH (e:Entity {scope_key: $scope_key, id: id})
WHERE e.created_at = $now
RETURN count(e) AS created
""",
)

STAMP_DOCUMENT_BYTES = Statement(
    "STAMP_QUOTA_DOCUMENT_BYTES",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
SET d.quota_bytes = $bytes
""",
)

# A chunk edit's change to its document's bytes (null stays null: counted from the chunks).
ADD_DOCUMENT_BYTES = Statement(
    "ADD_QUOTA_DOCUMENT_BYTES",
    """
MATCH (d:Document {scope_key: $scope_key, id: $id})
SET d.quota_bytes = d.quota_bytes + $delta
""",
)
