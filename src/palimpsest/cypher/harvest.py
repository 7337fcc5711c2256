"""The harvest bridge: ``:PendingSpan`` rows banked in a user's scope, and what the owner sees
of them.

A span's id is derived from the scope key, the run and the runtime's ``sourceId``, so the
``MERGE`` below is the idempotency check: a second send of the same span finds the first and
writes nothing. ``seq`` orders a scope's spans; it is taken from a counter on the scope's
``:Scope`` node, whose write lock also serialises concurrent harvests of one user.
``HARVEST_SPANS`` takes that lock first, by writing a parameter (``touched_at``) before the
counter: when the node's first write in the transaction was the counter's increment (a
property set from its own value), concurrent harvests of one user deadlocked once they
raised the quota counters (Neo4j's wait cycle: one harvest holds the node's lock and waits
for the node's relationship-group lock, which another took before it waits for the node's),
and the driver retried them after a second or more (tests/integration/test_harvest_concurrent.py,
docs/notes/load.md, "Concurrent writers of one scope").

``lease_expires_at`` doubles as "leasable from": a new span is leasable at once, a failed one
after its back-off. Status values are parameters (``$queued``, ``$done``, ``$dead``).
"""

from palimpsest.cypher.driver.executor import Statement

# The two SET clauses in this order: the parameter's write is the lock (the docstring says why).
HARVEST_SPANS = Statement(
    "HARVEST_SPANS",
    """
MERGE (s:Scope {scope_key: $scope_key})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.created_at = $now
SET s.touched_at = $now
SET s.span_seq = coalesce(s.span_seq, 0) + size($spans)
WITH s.span_seq - size($spans) AS base
UNWIND $spans AS item
MERGE (p:PendingSpan {scope_key: $scope_key, id: item.id})
ON CREATE SET p.tenant_id = $tenant_id, p.scope = $scope, p.owner_id = $owner_id,
              p.seq = base + item.index, p.batch = $batch, p.source_id = item.source_id,
              p.text = item.text, p.speaker = item.speaker, p.role = item.role,
              p.observed_at = item.observed_at, p.facts = item.facts, p.bytes = item.bytes,
              p.created_at = $now, p.status = $queued, p.lease_expires_at = $now,
              p.attempts = 0, p.takeovers = 0,
              p.session_id = $session_id, p.run_id = $run_id, p.agent_name = $agent_name,
              p.model = $model, p.origin = $origin,
              p.compaction_generation = $compaction_generation,
              p.grant_memory = $grant_memory, p.grant_sql = $grant_sql, p.isolated = $isolated
RETURN item.index AS index, p.id AS id, p.batch = $batch AND p.seq = base + item.index AS created
""",
)

QUEUE_COUNTS = Statement(
    "QUEUE_COUNTS",
    """
MATCH (p:PendingSpan {scope_key: $scope_key})
RETURN p.status AS status,
       sum(CASE WHEN p.status = $queued AND p.lease_owner IS NOT NULL
                     AND p.lease_expires_at > $now THEN 1 ELSE 0 END) AS leased,
       count(p) AS spans, min(p.created_at) AS oldest
""",
)

# Newest first, paged by (dead_at, id); no cursor: $after_at is null.
DEAD_LETTERS = Statement(
    "DEAD_LETTERS",
    """
MATCH (p:PendingSpan {scope_key: $scope_key})
WHERE p.status = $dead
  AND ($after_at IS NULL OR p.dead_at < $after_at
       OR (p.dead_at = $after_at AND p.id > $after_id))
RETURN p.id AS id, p.source_id AS source_id, p.session_id AS session_id,
       p.attempts AS attempts, p.last_error AS error, p.dead_at AS dead_at
ORDER BY p.dead_at DESC, p.id
LIMIT $limit
""",
)
