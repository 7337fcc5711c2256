"""Per-scope term statistics for scope-local BM25: ``:TermStats`` nodes of the scope.

One node per (scope, kind, term, shard) holds a document frequency ``df``; the node with the
empty term holds the kind's row count (``df``) and total length (``len``). A write
transaction adds its changes to one shard, chosen at random, in term order: writers of one
scope rarely wait on each other and never deadlock. Readers sum the shards.
"""

from palimpsest.cypher.executor import Statement

APPLY_TERM_STATS = Statement(
    "APPLY_TERM_STATS",
    """
UNWIND $changes AS d
MERGE (s:TermStats {scope_key: $scope_key, kind: d.kind, term: d.term, shard: $shard})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.df = 0, s.len = 0
SET s.df = s.df + d.df, s.len = s.len + d.len
RETURN count(s) AS changed
""",
)

READ_TERM_STATS = Statement(
    "READ_TERM_STATS",
    """
MATCH (s:TermStats {scope_key: $scope_key})
WHERE s.kind IN $kinds AND s.term IN $terms
RETURN s.kind AS kind, s.term AS term, sum(s.df) AS df, sum(s.len) AS len
""",
)

READ_SPEAKERS = Statement(
    "READ_SPEAKERS",
    """
MATCH (s:TermStats {scope_key: $scope_key, kind: $kind})
WHERE s.term IS NOT NULL
WITH s.term AS term, sum(s.df) AS df
WHERE df > 0
RETURN term
ORDER BY term
LIMIT $limit
""",
)
