"""Namespaced notes (palimpsest/domain/notes/namespaces.py): ranked search and namespace listing.

Both read live ``:Memory`` rows of one scope under a key prefix; the prefix, the query vector
and the paging are ``$parameters``.
"""

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.memory import ENTRY, NOTE_VALID

# ``$needles``: texts the stored JSON value must contain (namespaces.needles, a prefilter).
_LIVE_UNDER_PREFIX = """
MATCH (m:Memory {scope_key: $scope_key})
WHERE m.key STARTS WITH $prefix AND all(n IN $needles WHERE m.value CONTAINS n)
  AND (m.expires_at IS NULL OR m.expires_at > $now) AND """

# The notes under the prefix after ``$after``, in key order.
LIST_UNDER_PREFIX = Statement(
    "LIST_UNDER_PREFIX",
    _LIVE_UNDER_PREFIX
    + NOTE_VALID
    + """
  AND m.key > $after"""
    + ENTRY
    + """
ORDER BY m.key
LIMIT $limit
""",
)

# Every note under the prefix, nearest the query first (notes without a vector last, in key
# order); exact cosine over the prefix, so nothing outside it takes a place in the ranking.
RANK_UNDER_PREFIX = Statement(
    "RANK_UNDER_PREFIX",
    _LIVE_UNDER_PREFIX
    + NOTE_VALID
    + """
WITH m, vector.similarity.cosine(m.embedding, $vector) AS score
ORDER BY score IS NULL, score DESC, m.key
SKIP $skip LIMIT $limit
WITH m, score"""
    + ENTRY
    + ", score AS score",
)

# The distinct namespace parts (between the root and the first ``$separator``, ``//``) under
# the prefix.
NAMESPACES_UNDER_PREFIX = Statement(
    "NAMESPACES_UNDER_PREFIX",
    _LIVE_UNDER_PREFIX
    + NOTE_VALID
    + """
  AND m.key CONTAINS $separator
WITH DISTINCT split(substring(m.key, size($root)), $separator)[0] AS path
RETURN path
ORDER BY path
""",
)
