"""The consolidator's queue: leases on ``:PendingSpan`` rows, acknowledgements, dead letters.

Leasing is scoped: a worker leases the spans of one user scope at a time, through a handle
bound to that scope. Only three statements (``CrossScopeStatement``) read across scopes,
and they return scope ids and counts, never span content: ``PENDING_SCOPES`` says which
scopes have leasable work, ``QUEUE_GAUGES`` and ``TENANT_QUEUE_COUNTS`` count rows for the
metrics and for a tenant admin.

A lease is taken in two statements of one transaction: the first takes the write locks of the
candidates (``SET``), the second re-reads them under those locks and leases only those still
free. A competing worker blocks on the locks and then finds them taken, so two workers never
hold one span. The write that consolidates a span re-checks ownership the same way.
"""

from palimpsest.cypher.driver.executor import CrossScopeStatement, Statement

# Which scopes have leasable work, oldest first. Ids only: the worker then resolves each
# scope for its owner and reads spans through a handle bound to it.
PENDING_SCOPES = CrossScopeStatement(
    "PENDING_SCOPES",
    """
MATCH (p:PendingSpan)
WHERE p.status = $queued AND p.lease_expires_at <= $now
WITH p.tenant_id AS tenant_id, p.owner_id AS owner_id, p.scope_key AS scope_key,
     min(p.lease_expires_at) AS since
RETURN tenant_id, owner_id, scope_key
ORDER BY since
LIMIT $limit
""",
)

QUEUE_GAUGES = CrossScopeStatement(
    "QUEUE_GAUGES",
    """
MATCH (p:PendingSpan)
WHERE p.status IN [$queued, $dead]
RETURN p.status AS status, count(p) AS spans,
       sum(CASE WHEN p.lease_owner IS NOT NULL AND p.lease_expires_at > $now
                THEN 1 ELSE 0 END) AS leased,
       sum(CASE WHEN p.lease_owner IS NOT NULL AND p.lease_expires_at <= $now
                THEN 1 ELSE 0 END) AS expired,
       min(p.created_at) AS oldest
""",
)

TENANT_QUEUE_COUNTS = CrossScopeStatement(
    "TENANT_QUEUE_COUNTS",
    """
MATCH (p:PendingSpan)
WHERE p.tenant_id = $tenant
RETURN p.status AS status,
       sum(CASE WHEN p.status = $queued AND p.lease_owner IS NOT NULL
                     AND p.lease_expires_at > $now THEN 1 ELSE 0 END) AS leased,
       count(p) AS spans, min(p.created_at) AS oldest
""",
)

LOCK_LEASABLE = Statement(
    "LOCK_LEASABLE",
    """
MATCH (p:PendingSpan {scope_key: $scope_key})
WHERE p.status = $queued AND p.lease_expires_at <= $now
WITH p ORDER BY p.seq LIMIT $limit
SET p.lease_probe = $owner
RETURN p.id AS id
""",
)

# Spans a lost worker held too often become dead letters instead of being leased again.
EXHAUST_SPANS = Statement(
    "EXHAUST_SPANS",
    """
UNWIND $ids AS id
MATCH (p:PendingSpan {id: id})
WHERE p.scope_key = $scope_key AND p.status = $queued AND p.lease_expires_at <= $now
  AND p.attempts >= $max_attempts
SET p.status = $dead, p.dead_at = $now, p.lease_owner = null,
    p.last_error = coalesce(p.last_error, $lost_error)
RETURN p.id AS id
""",
)

LEASE_SPANS = Statement(
    "LEASE_SPANS",
    """
UNWIND $ids AS id
MATCH (p:PendingSpan {id: id})
WHERE p.scope_key = $scope_key AND p.status = $queued AND p.lease_expires_at <= $now
SET p.takeovers = p.takeovers + CASE WHEN p.lease_owner IS NULL THEN 0 ELSE 1 END,
    p.attempts = p.attempts + 1, p.lease_owner = $owner, p.leased_at = $now,
    p.lease_expires_at = $until
RETURN p {.id, .seq, .text, .speaker, .role, .observed_at, .facts, .source_id, .session_id,
          .run_id, .agent_name, .model, .compaction_generation, .grant_memory, .grant_sql,
          .isolated, .attempts, .takeovers} AS span
ORDER BY p.seq
""",
)

LOCK_SPANS = Statement(
    "LOCK_SPANS",
    """
UNWIND $ids AS id
MATCH (p:PendingSpan {id: id})
WHERE p.scope_key = $scope_key
SET p.lease_probe = $owner
RETURN p.id AS id
""",
)

# Read under the locks taken by LOCK_SPANS: the spans this worker still holds.
HELD_SPANS = Statement(
    "HELD_SPANS",
    """
UNWIND $ids AS id
MATCH (p:PendingSpan {id: id})
WHERE p.scope_key = $scope_key AND p.status = $queued AND p.lease_owner = $owner
RETURN p.id AS id
""",
)

# The payload now lives in the chunk; the row stays as the idempotency record of the span.
ACK_SPANS = Statement(
    "ACK_SPANS",
    """
UNWIND $ids AS id
MATCH (p:PendingSpan {id: id})
WHERE p.scope_key = $scope_key AND p.status = $queued AND p.lease_owner = $owner
SET p.status = $done, p.done_at = $now, p.consolidated_by = $owner, p.lease_owner = null,
    p.chunk_id = p.id, p.document_id = $documents[p.id]
REMOVE p.text, p.facts
RETURN p.id AS id
""",
)

# A failed span waits ``attempts x backoff`` before its next lease, or becomes a dead letter.
FAIL_SPANS = Statement(
    "FAIL_SPANS",
    """
UNWIND $failures AS failure
MATCH (p:PendingSpan {id: failure.id})
WHERE p.scope_key = $scope_key AND p.status = $queued AND p.lease_owner = $owner
WITH p, failure, p.attempts >= $max_attempts AS exhausted
SET p.status = CASE WHEN exhausted THEN $dead ELSE $queued END,
    p.dead_at = CASE WHEN exhausted THEN $now ELSE null END,
    p.lease_expires_at = CASE WHEN exhausted THEN $now
        ELSE $now + duration({seconds: $backoff_seconds * p.attempts}) END,
    p.last_error = failure.error, p.lease_owner = null
RETURN p.id AS id, exhausted
""",
)

# A worker stopping cleanly hands back what it has not started; the lease did not count.
RELEASE_SPANS = Statement(
    "RELEASE_SPANS",
    """
UNWIND $ids AS id
MATCH (p:PendingSpan {id: id})
WHERE p.scope_key = $scope_key AND p.status = $queued AND p.lease_owner = $owner
SET p.lease_owner = null, p.lease_expires_at = $now, p.attempts = p.attempts - 1
RETURN p.id AS id
""",
)

# Operators and owners may give a dead letter another chance.
REQUEUE_DEAD = Statement(
    "REQUEUE_DEAD",
    """
UNWIND $ids AS id
MATCH (p:PendingSpan {id: id})
WHERE p.scope_key = $scope_key AND p.status = $dead
SET p.status = $queued, p.attempts = 0, p.lease_expires_at = $now, p.dead_at = null,
    p.requeued_at = $now
RETURN p.id AS id
""",
)
