"""Fact pairs (docs/extraction.md, Judging conflicts): two facts of one scope, subject and
predicate, close in meaning but not merged, recorded when the newer one is written, judged by
the operator's model later, and listed by ``factConflicts``.

A pair is a ``:FactPair`` node of the facts' scope naming them by id (``older_id``,
``newer_id``): facts are relationships, so no edge can point at one, and a node of the same
scope keeps the pair from ever joining two scopes. Every fact deletion deletes the pairs that
name the fact (``cypher/erasure.py``, ``cypher/facts.py`` ``DROP_UNSOURCED_FACTS``).
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import FACT_ROW

# Recorded in the fact write's transaction; a pair already recorded (either order) is kept.
RECORD_FACT_PAIRS = Statement(
    "RECORD_FACT_PAIRS",
    """
UNWIND $pairs AS pair
MERGE (p:FactPair {scope_key: $scope_key, id: pair.id})
ON CREATE SET p.tenant_id = $tenant_id, p.scope = $scope, p.owner_id = $owner_id,
    p.older_id = pair.older_id, p.newer_id = pair.newer_id, p.cosine = pair.cosine,
    p.created_at = $now, p.attempts = 0
RETURN count(p) AS recorded
""",
)

_SIDE: LiteralString = "{.text, .predicate, .valid_at, .invalid_at, .observed_at}"

# The oldest pairs without a verdict that fewer than ``$max_attempts`` failed calls asked
# (both facts found before the limit, so no pair can hold a place it cannot use).
PENDING_FACT_PAIRS = Statement(
    "PENDING_FACT_PAIRS",
    """
MATCH (p:FactPair {scope_key: $scope_key})
WHERE p.verdict IS NULL AND coalesce(p.attempts, 0) < $max_attempts
MATCH (s1:Entity)-[a:FACT {scope_key: $scope_key, id: p.older_id}]->(o1:Entity)
MATCH (s2:Entity)-[b:FACT {scope_key: $scope_key, id: p.newer_id}]->(o2:Entity)
WITH p, a, s1, o1, b, s2, o2 ORDER BY p.created_at, p.id LIMIT $limit
RETURN p.id AS id,
       a """
    + _SIDE
    + """ AS older, s1.name AS older_subject, o1.name AS older_object,
       b """
    + _SIDE
    + """ AS newer, s2.name AS newer_subject, o2.name AS newer_object
ORDER BY p.created_at, p.id
""",
)

# The pairs a judge would still be asked about (``judgeConflicts``' ``pending`` count).
COUNT_PENDING_FACT_PAIRS = Statement(
    "COUNT_PENDING_FACT_PAIRS",
    """
MATCH (p:FactPair {scope_key: $scope_key})
WHERE p.verdict IS NULL AND coalesce(p.attempts, 0) < $max_attempts
RETURN count(p) AS pending
""",
)

# A verdict is given once: a pair already judged (by another worker) keeps its first.
RECORD_VERDICTS = Statement(
    "RECORD_VERDICTS",
    """
UNWIND $rulings AS r
MATCH (p:FactPair {scope_key: $scope_key, id: r.id})
WHERE p.verdict IS NULL
SET p.verdict = r.verdict, p.reason = r.reason, p.judged_by = $judged_by, p.judged_at = $now
RETURN count(p) AS judged
""",
)

# A failed call is counted on its pairs, so a pair a model cannot judge is not asked forever.
COUNT_JUDGE_FAILURES = Statement(
    "COUNT_JUDGE_FAILURES",
    """
UNWIND $ids AS id
MATCH (p:FactPair {scope_key: $scope_key, id: id})
WHERE p.verdict IS NULL
SET p.attempts = coalesce(p.attempts, 0) + 1, p.failed_at = $now
RETURN count(p) AS failed
""",
)

# ``factConflicts``: newest first, each with both facts whatever their time; ``$verdicts``
# (null: any, judged or not) and ``$pending`` (pairs not judged yet) filter. Both facts are
# found before the limit, so a pair naming a fact the scope lacks cannot shorten a page.
LIST_FACT_PAIRS = Statement(
    "LIST_FACT_PAIRS",
    """
MATCH (p:FactPair {scope_key: $scope_key})
WHERE (($verdicts IS NULL AND NOT $pending) OR p.verdict IN coalesce($verdicts, [])
       OR ($pending AND p.verdict IS NULL))
  AND ($after_at IS NULL OR p.created_at < $after_at
       OR (p.created_at = $after_at AND p.id > $after_id))
  AND EXISTS { MATCH ()-[:FACT {scope_key: $scope_key, id: p.older_id}]->() }
  AND EXISTS { MATCH ()-[:FACT {scope_key: $scope_key, id: p.newer_id}]->() }
WITH p ORDER BY p.created_at DESC, p.id LIMIT $limit
CALL (p) {
  MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, id: p.older_id}]->(o:Entity)
  RETURN """
    + FACT_ROW
    + """ AS older
}
CALL (p) {
  MATCH (s:Entity)-[f:FACT {scope_key: $scope_key, id: p.newer_id}]->(o:Entity)
  RETURN """
    + FACT_ROW
    + """ AS newer
}
RETURN p {.id, .cosine, .verdict, .reason, .judged_by, .judged_at, .created_at} AS pair,
       older, newer
ORDER BY p.created_at DESC, p.id
""",
)
