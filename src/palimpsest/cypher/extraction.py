"""The model extractor's daily token ledger: two counters on the tenant scope's ``:Scope`` node
(``extraction_day``, the UTC day they count, and ``extraction_tokens``), read before a call and
added to after it (``PALIMPSEST_MAX_EXTRACTION_TOKENS_PER_DAY``, docs/extraction.md)."""

from palimpsest.cypher.driver.executor import Statement

EXTRACTION_TOKENS = Statement(
    "EXTRACTION_TOKENS",
    """
OPTIONAL MATCH (s:Scope {scope_key: $scope_key})
RETURN CASE WHEN s.extraction_day = $day THEN coalesce(s.extraction_tokens, 0) ELSE 0 END
       AS used
""",
)

# A new day starts the count again; the node is made as every writer of the scope makes it.
SPEND_EXTRACTION_TOKENS = Statement(
    "SPEND_EXTRACTION_TOKENS",
    """
MERGE (s:Scope {scope_key: $scope_key})
ON CREATE SET s.tenant_id = $tenant_id, s.scope = $scope, s.owner_id = $owner_id,
              s.created_at = $now
SET s.extraction_tokens = CASE WHEN s.extraction_day = $day
                               THEN coalesce(s.extraction_tokens, 0) + $tokens
                               ELSE $tokens END,
    s.extraction_day = $day
RETURN s.extraction_tokens AS used
""",
)
