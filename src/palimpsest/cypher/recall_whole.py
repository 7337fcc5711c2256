"""Exact vector legs for small scopes, read from the vector index: the whole scope at once.

Why: the exact scan (``EXACT_*`` in ``cypher/recall.py``) reads every row's ``LIST<FLOAT>``
property from the store, and that read, not the cosine, is its cost (PROFILE on 2,000 rows of
384 floats: ``size(c.embedding)`` alone costs as much as the whole scan; the vector index keeps
its own copy of the vectors and scores them without the store).

How exactness holds by construction, never by luck: the filtered index is asked for ``$n`` rows
(at least the scope's row count), and the same statement counts the scope's embedded rows
(``total``, an index seek on ``scope_key`` and a property-existence check: no vector is read).
Only when the index answered every one of them (``size(found) = total``) are they ranked, by the
index's score, ties by id, and the exact top ``$k`` taken from them as the exact scan takes
it (``cypher/driver/cosine.py``: the index's score is float32, so the rows it cannot order for
certain are re-scored from their stored doubles), with the leg's usual columns; so the answer
is the exact scan's whatever the index's search did, and depends only on the scope's rows.
Otherwise (a lagging row count, a row the index does not hold, an empty scope) the statement
answers no rows at all, and the leg falls back to the exact scan.
"""

from typing import LiteralString

from palimpsest.cypher import recall as q
from palimpsest.cypher.driver.cosine import exact_top
from palimpsest.cypher.driver.executor import Statement


def whole_body(
    count: LiteralString,
    match: LiteralString,
    var: LiteralString,
    ident: LiteralString,
    index: LiteralString,
) -> LiteralString:
    """The head of a whole-scope leg: the count, the index call, the completeness check and
    the exact top ``$k`` in rank order (the caller appends the leg's usual tail). Without
    the ``CYPHER 25`` line, so the one-statement search (``recall_one``) can nest it."""
    return (
        "CALL () {\n  MATCH "
        + count
        + "\n  WHERE x.scope_key = $scope_key AND x.embedding IS NOT NULL\n"
        "  RETURN count(x) AS total\n}\nMATCH "
        + match
        + "\n  SEARCH "
        + var
        + " IN (VECTOR INDEX "
        + index
        + " FOR $vector WHERE "
        + var
        + ".scope_key = $scope_key\n               LIMIT $n)\n  SCORE AS score\nWITH total, "
        + var
        + ", score WHERE "
        + var
        + ".scope_key = $scope_key\nORDER BY score DESC, "
        + ident
        + "\nWITH total, collect("
        + var
        + ") AS found, collect(score) AS ranked\nWHERE size(found) = total"
        + exact_top(var, ident)
    )


WHOLE_MEMORY = Statement(
    "WHOLE_MEMORY",
    "CYPHER 25\n"
    + whole_body("(x:Memory)", "(m:Memory)", "m", "m.key", "memory_embedding")
    + q.MEMORY_SCORED,
)

WHOLE_CHUNKS = Statement(
    "WHOLE_CHUNKS",
    "CYPHER 25\n"
    + whole_body("(x:Chunk)", "(c:Chunk)", "c", "c.id", "chunk_embedding")
    + q.CHUNK_SCORED,
)

WHOLE_FACTS = Statement(
    "WHOLE_FACTS",
    "CYPHER 25\n"
    + whole_body("()-[x:FACT]->()", "()-[f:FACT]->()", "f", "f.id", "fact_embedding")
    + q.FACT_SCORED,
)
