"""Per-scope term statistics for scope-local BM25: ``:TermStats`` nodes of the scope.

One node per (scope, kind, term, shard) holds a document frequency ``df`` and the peaks of the
rows written to it (``max_tf``, the largest term frequency; ``max_ratio``, the largest ratio
of frequency to row length), which only grow: they bound what the term adds to a score. A
node made before peaks were kept lacks ``bounded``, and its term keeps the loose bound. The
node with the empty term holds the kind's row count (``df``) and total length (``len``). A write
transaction adds its changes to one shard, chosen at random, in term order: writers of one
scope rarely wait on each other. Readers sum the shards. A term whose shards sum to nothing
is dropped by the write that took it there (``PRUNE_CHANGES``); locking its shards can meet
another such writer in a deadlock, which the executor retries.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement

# Adds ``$changes`` (``StatsDelta.changes``) to shard ``$shard``, in the order given (term
# order). A fragment, so a write statement can apply its statistics itself (in a
# ``CALL () { ... }``: cypher/memory.py ``WRITE_MEMORY``).
# ``APPLY_TERMS`` is the same for changes already bound as ``d`` (a write statement that
# applies them only on a condition: cypher/facts.py ``ASSERT_FACTS``).
APPLY_TERMS: LiteralString = """
MERGE (ts:TermStats {scope_key: $scope_key, kind: d.kind, term: d.term, shard: $shard})
ON CREATE SET ts.tenant_id = $tenant_id, ts.scope = $scope, ts.owner_id = $owner_id,
              ts.df = 0, ts.len = 0, ts.max_tf = 0, ts.max_ratio = 0.0, ts.bounded = true
WITH ts, d, coalesce(ts.max_tf, 0) AS max_tf, coalesce(ts.max_ratio, 0.0) AS max_ratio
SET ts.df = ts.df + d.df, ts.len = ts.len + d.len,
    ts.max_tf = CASE WHEN d.max_tf > max_tf THEN d.max_tf ELSE max_tf END,
    ts.max_ratio = CASE WHEN d.max_ratio > max_ratio THEN d.max_ratio ELSE max_ratio END
"""
APPLY_CHANGES: LiteralString = "\nUNWIND $changes AS d" + APPLY_TERMS

APPLY_TERM_STATS = Statement("APPLY_TERM_STATS", APPLY_CHANGES + "RETURN count(ts) AS changed\n")

# The query terms' statistics per kind and, when ``$speakers``, the speakers the scope knows
# (kind ``$speaker_kind``, ``len`` 0), in one round trip. The hint keeps the planner off the
# index on ``scope_key`` alone, which reads every term the scope has ever seen.
# The body is shared with the text side's one statement (``cypher/recall_text.py``).
TERM_STATS_ROWS: LiteralString = """CALL () {
  MATCH (s:TermStats {scope_key: $scope_key})
  USING INDEX s:TermStats(scope_key, kind, term)
  WHERE s.kind IN $kinds AND s.term IN $terms
  RETURN s.kind AS kind, s.term AS term, sum(s.df) AS df, sum(s.len) AS len,
         max(s.max_tf) AS max_tf, max(s.max_ratio) AS max_ratio,
         count(s.bounded) = count(s) AS bounded
  UNION ALL
  MATCH (s:TermStats {scope_key: $scope_key, kind: $speaker_kind})
  WHERE $speakers AND s.term IS NOT NULL
  WITH s.term AS term, sum(s.df) AS df
  WHERE df > 0
  RETURN $speaker_kind AS kind, term, df, 0 AS len, 0 AS max_tf, 0.0 AS max_ratio,
         false AS bounded
  ORDER BY term
  LIMIT $limit
}
"""

READ_TERM_STATS = Statement(
    "READ_TERM_STATS",
    "CYPHER 25\n"
    + TERM_STATS_ROWS
    + """RETURN kind, term, df, len, max_tf, max_ratio, bounded
""",
)

# After a write took rows out of the statistics (a delete, an overwrite, an edit, erasure, a
# withdrawn source), a term whose shards sum to nothing is dropped in the same transaction: a
# zero count would keep the word itself. Every shard is locked before it is read (``SET`` of
# a property from itself takes the write lock first), so a writer changing a shard meanwhile
# either committed before or waits, and then writes a new shard. No unlocked read comes first:
# it cannot see another writer's uncommitted decrement, so two writers taking the last two
# rows holding a word would each see one left, and neither would drop it. Two such writers
# each hold the shard they lowered and wait for the other's: a deadlock, which the executor
# retries, and the retry sees the other's commit.
# A fragment, so a write statement can prune itself (cypher/memory.py ``WRITE_MEMORY``, in a
# ``CALL () { ... }``): ``$pruned`` holds the ``{kind, term}`` the write lowered.
PRUNE_CHANGES: LiteralString = """
UNWIND $pruned AS t
MATCH (s:TermStats {scope_key: $scope_key, kind: t.kind, term: t.term})
SET s.df = s.df + 0
WITH t, collect(s) AS shards, sum(s.df) AS df, sum(coalesce(s.len, 0)) AS len
WHERE df = 0 AND len = 0
FOREACH (s IN shards | DELETE s)
"""

PRUNE_TERM_STATS = Statement(
    "PRUNE_TERM_STATS", "CYPHER 25\nCALL () {" + PRUNE_CHANGES + "}\nRETURN 1 AS pruned\n"
)

# -- peaks for statistics written before they were kept ------------------------------------

# The kind's terms whose statistics lack peaks (the totals row never has any).
COUNT_UNBOUNDED = Statement(
    "COUNT_UNBOUNDED",
    """
MATCH (s:TermStats {scope_key: $scope_key, kind: $kind})
WHERE s.bounded IS NULL AND s.term <> ''
RETURN count(s) AS n
""",
)


def _peaks_of(match: LiteralString, var: LiteralString) -> LiteralString:
    """Every term's peaks over the scope's rows of one kind, from their stored terms (``ft``
    holds them joined by ``$space``, ``ft_tf`` their frequencies in the same order)."""
    return (
        match
        + "\nWHERE "
        + var
        + ".ft_tf IS NOT NULL AND "
        + var
        + ".ft_len > 0\nWITH "
        + var
        + ".ft_tf AS tf, split("
        + var
        + ".ft, $space) AS terms, toFloat("
        + var
        + """.ft_len) AS len
UNWIND range(0, size(tf) - 1) AS i
RETURN terms[i] AS term, max(tf[i]) AS max_tf, max(tf[i] / len) AS max_ratio
"""
    )


PEAKS_MEMORY = Statement("PEAKS_MEMORY", _peaks_of("MATCH (m:Memory {scope_key: $scope_key})", "m"))
PEAKS_CHUNKS = Statement("PEAKS_CHUNKS", _peaks_of("MATCH (c:Chunk {scope_key: $scope_key})", "c"))
PEAKS_FACTS = Statement(
    "PEAKS_FACTS", _peaks_of("MATCH ()-[f:FACT {scope_key: $scope_key}]->()", "f")
)

# Peaks raise what is there (writers since the scan have raised them too), and mark the term.
SET_PEAKS = Statement(
    "SET_PEAKS",
    """
UNWIND $peaks AS p
MATCH (s:TermStats {scope_key: $scope_key, kind: $kind, term: p.term})
WHERE s.bounded IS NULL
WITH s, p, coalesce(s.max_tf, 0) AS max_tf, coalesce(s.max_ratio, 0.0) AS max_ratio
SET s.max_tf = CASE WHEN p.max_tf > max_tf THEN p.max_tf ELSE max_tf END,
    s.max_ratio = CASE WHEN p.max_ratio > max_ratio THEN p.max_ratio ELSE max_ratio END,
    s.bounded = true
RETURN count(DISTINCT p.term) AS terms
""",
)

# Terms no row held at the scan: any row written since has raised their peaks itself.
BOUND_THE_REST = Statement(
    "BOUND_THE_REST",
    """
MATCH (s:TermStats {scope_key: $scope_key, kind: $kind})
WHERE s.bounded IS NULL AND s.term <> ''
SET s.max_tf = coalesce(s.max_tf, 0), s.max_ratio = coalesce(s.max_ratio, 0.0),
    s.bounded = true
RETURN count(DISTINCT s.term) AS terms
""",
)
