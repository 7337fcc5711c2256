"""A whole search of one scope in one statement, on the procedure engine (issue 43 item 2).

``SEARCH_ONE`` reads the query terms' statistics (the body of ``READ_TERM_STATS``) and then,
per kind, in ``OPTIONAL CALL`` subqueries that answer ``null`` when they do not apply:

- ``text_<kind>`` (``$text_<kind>``): the full-text leg through the extension
  (``palimpsest.textLeg``), when the scope's statistics count the query terms on at most
  ``$one_max_rows`` rows together: every row holding a query term is matched and only the best
  ``$top`` are returned, scored with idf weights computed here from the statistics just read
  (Java's ``log``, which may differ from Python's in the last bit: the resolver scores the rows
  again with its own weights and checks that no row left out can reach the pool,
  ``resolvers/recall/one.py``). Each row comes with its stored terms, cues and (notes, chunks)
  what a hit shows, so neither a cue read nor a hit load follows.
- ``vector_<kind>`` (``$vector_<kind>``): the vector leg's first read as the planner would
  choose it from the same statistics: the whole scope from the index (``recall_whole``, asked
  for ``$n`` rows; empty when the index did not answer every row) up to ``$exact_max`` rows,
  else the filtered index asked for ``$ann_k``.

The row filters, the scope re-check after every index call and the tails are the legs' own
fragments (``recall``, ``recall_procedure``, ``recall_whole``): one copy of each predicate.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import FACT_VISIBLE
from palimpsest.cypher.recall import (
    CHUNK_CUES,
    CHUNK_HIT,
    CHUNK_LIVE,
    CHUNK_SCORED,
    FACT_CUES,
    FACT_SCORED,
    MEMORY_CUES,
    MEMORY_LIVE,
    MEMORY_SCORED,
    MEMORY_UNTIMELY,
    NOTE_HIT,
)
from palimpsest.cypher.recall_whole import whole_body
from palimpsest.cypher.terms import TERM_STATS_ROWS


def _total(kind: LiteralString) -> LiteralString:
    """The kind's totals row of the statistics (null when the scope holds none)."""
    return "head([s IN stats WHERE s.kind = $kind_" + kind + " AND s.term = '' | s])"


def _text(
    kind: LiteralString,
    yielded: LiteralString,
    var: LiteralString,
    ident: LiteralString,
    live: LiteralString,
    extra: LiteralString,
) -> LiteralString:
    return (
        "\nOPTIONAL CALL (stats) {\n  WITH stats, "
        + _total(kind)
        + " AS total,\n       [t IN $text_terms WHERE any(s IN stats WHERE s.kind = $kind_"
        + kind
        + " AND s.term = t AND s.df > 0)] AS known\n  WHERE $text_"
        + kind
        + " AND total IS NOT NULL AND total.df > 0 AND total.len > 0 AND size(known) > 0\n"
        "    AND reduce(n = 0, s IN stats | n + CASE WHEN s.kind = $kind_"
        + kind
        + " AND s.term <> '' THEN s.df ELSE 0 END) <= $one_max_rows\n"
        "  WITH known, toFloat(total.df) AS n, toFloat(total.len) / total.df AS avg,\n"
        "       [t IN known | head([s IN stats WHERE s.kind = $kind_"
        + kind
        + " AND s.term = t | s.df])] AS dfs\n"
        "  CALL (known, n, avg, dfs) {\n"
        "    CALL palimpsest.textLeg($kind_"
        + kind
        + ", $scope_key, [t IN known | [t]], [], known,\n"
        "        [d IN dfs | log(1.0 + (n - d + 0.5) / (d + 0.5))], $k1, $b, avg, $top)\n"
        "    YIELD "
        + yielded
        + " AS "
        + var
        + ", score, matched\n    WITH "
        + var
        + ", score, matched WHERE "
        + var
        + ".scope_key = $scope_key\n    RETURN collect("
        + ident
        + ") AS ids, collect(score) AS scores, collect(coalesce("
        + live
        + ", false)) AS live, max(matched) AS matched, collect(coalesce("
        + var
        + ".ft_len, 0)) AS lens, collect(coalesce("
        + var
        + ".ft, '')) AS ft, collect(coalesce("
        + var
        + ".ft_tf, [])) AS tf"
        + extra
        + "\n  }\n  RETURN {ids: ids, scores: scores, live: live, matched: matched, lens: lens, "
        "ft: ft, tf: tf, cues: cues"
        + (", untimely: untimely" if kind == "memory" else "")
        + (", rows: rows" if kind != "fact" else "")
        + "} AS text_"
        + kind
        + "\n}"
    )


def _vector(
    kind: LiteralString, whole: LiteralString, ann: LiteralString, columns: LiteralString
) -> LiteralString:
    """The vector leg's first read: the whole scope up to ``$exact_max`` rows, else ANN."""
    rows = "coalesce(" + _total(kind) + ".df, 0)"
    return (
        "\nOPTIONAL CALL (stats) {\n  WITH stats WHERE $vector_"
        + kind
        + " AND 0 < "
        + rows
        + " <= $exact_max\n  CALL () {\n"
        + whole
        + "\n  }\n  RETURN {"
        + columns
        + "} AS whole_"
        + kind
        + "\n}\nOPTIONAL CALL (stats) {\n  WITH stats WHERE $vector_"
        + kind
        + " AND "
        + rows
        + " > $exact_max\n  CALL () {\n"
        + ann
        + "\n  }\n  RETURN {"
        + columns
        + "} AS ann_"
        + kind
        + "\n}"
    )


def _ann(match: LiteralString, var: LiteralString, index: LiteralString) -> LiteralString:
    return (
        "MATCH "
        + match
        + "\n  SEARCH "
        + var
        + " IN (VECTOR INDEX "
        + index
        + " FOR $vector WHERE "
        + var
        + ".scope_key = $scope_key\n               LIMIT $ann_k)\n  SCORE AS score"
    )


_NOTE_ROWS: LiteralString = ", collect(" + NOTE_HIT + ") AS rows"
_CHUNK_ROWS: LiteralString = ", collect(" + CHUNK_HIT + ") AS rows"
_MEMORY_COLUMNS: LiteralString = (
    "ids: ids, scores: scores, live: live, untimely: untimely, cues: cues, rows: rows"
)
_CHUNK_COLUMNS: LiteralString = "ids: ids, scores: scores, live: live, cues: cues, rows: rows"
_FACT_COLUMNS: LiteralString = "ids: ids, scores: scores, live: live, cues: cues"

SEARCH_ONE = Statement(
    "SEARCH_ONE",
    "CYPHER 25\n"
    + TERM_STATS_ROWS
    + """WITH collect({kind: kind, term: term, df: df, len: len, max_tf: max_tf,
                 max_ratio: max_ratio, bounded: bounded}) AS stats"""
    + _text("memory", "node", "m", "m.key", MEMORY_LIVE, MEMORY_UNTIMELY + MEMORY_CUES + _NOTE_ROWS)
    + _text("chunk", "node", "c", "c.id", CHUNK_LIVE, CHUNK_CUES + _CHUNK_ROWS)
    + _text("fact", "relationship", "f", "f.id", FACT_VISIBLE, FACT_CUES)
    + _vector(
        "memory",
        whole_body("(x:Memory)", "(m:Memory)", "m", "m.key", "memory_embedding") + MEMORY_SCORED,
        _ann("(m:Memory)", "m", "memory_embedding") + MEMORY_SCORED,
        _MEMORY_COLUMNS,
    )
    + _vector(
        "chunk",
        whole_body("(x:Chunk)", "(c:Chunk)", "c", "c.id", "chunk_embedding") + CHUNK_SCORED,
        _ann("(c:Chunk)", "c", "chunk_embedding") + CHUNK_SCORED,
        _CHUNK_COLUMNS,
    )
    + _vector(
        "fact",
        whole_body("()-[x:FACT]->()", "()-[f:FACT]->()", "f", "f.id", "fact_embedding")
        + FACT_SCORED,
        _ann("()-[f:FACT]->()", "f", "fact_embedding") + FACT_SCORED,
        _FACT_COLUMNS,
    )
    + """
RETURN stats, text_memory, text_chunk, text_fact, whole_memory, ann_memory, whole_chunk,
       ann_chunk, whole_fact, ann_fact
""",
)

# What only a server with the extension can plan (start-up's warm-up skips it elsewhere).
NAMES = frozenset({SEARCH_ONE.name})
