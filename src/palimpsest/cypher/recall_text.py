"""The text side of hybrid recall for one scope in one statement (``resolvers/recall/text.py``).

``READ_TEXT_SIDE`` reads the query terms' statistics (the body of ``READ_TERM_STATS``) and,
for each kind held (``$hold_memory``; ``$kind_memory`` names it; and so on) whose query
terms the scope's statistics count on fewer than ``$k`` rows together, every row of the
scope holding any query term (``$lucene``), with the full-text legs' columns (``TERMS_*``)
and every such row's cues (``CUES_*``, without the hit projection). The resolver then scores
them in Python as the legs do. A kind whose terms are counted on ``$k`` rows or more is not
read (``null``): its leg reads as before. Lucene is asked for ``$k`` rows at most; an answer
of ``$k`` rows may be cut (the statistics lag), and the resolver reads that kind as before
too, so the rows held are always all of them.

``HELD_HITS`` then reads what a hit shows of the notes and chunks the held legs kept for
their pools (what ``CUES_*`` return beside the cues), both kinds in one statement, so the
final load reads only the rows no leg returned, as before.
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import FACT_VISIBLE
from palimpsest.cypher.recall import (
    CHUNK_CUES,
    CHUNK_HIT,
    CHUNK_LIVE,
    FACT_CUES,
    MEMORY_CUES,
    MEMORY_LIVE,
    MEMORY_UNTIMELY,
    NOTE_HIT,
    terms_tail,
)
from palimpsest.cypher.terms import TERM_STATS_ROWS


def _df(kind: LiteralString) -> LiteralString:
    """The scope's count of rows of ``kind`` holding a query term, at most (the sum of the
    terms' document frequencies; the totals row has the empty term)."""
    return (
        "reduce(n = 0, s IN stats | n + CASE WHEN s.kind = $kind_"
        + kind
        + " AND s.term <> '' THEN s.df ELSE 0 END)"
    )


def _held(
    kind: LiteralString, search: LiteralString, tail: LiteralString, untimely: LiteralString
) -> LiteralString:
    return (
        "\nOPTIONAL CALL (stats) {\n  WITH stats WHERE $hold_"
        + kind
        + " AND 0 < "
        + _df(kind)
        + " < $k\n  CALL () {\n    "
        + search
        + tail
        + "\n  }\n  RETURN {ids: ids, lens: lens, live: live, ft: ft, tf: tf, cues: cues"
        + untimely
        + "} AS "
        + kind
        + "\n}"
    )


READ_TEXT_SIDE = Statement(
    "READ_TEXT_SIDE",
    "CYPHER 25\n"
    + TERM_STATS_ROWS
    + """WITH collect({kind: kind, term: term, df: df, len: len, max_tf: max_tf,
                 max_ratio: max_ratio, bounded: bounded}) AS stats"""
    + _held(
        "memory",
        """MATCH (m:Memory)
      SEARCH m IN (FULLTEXT INDEX memory_terms FOR $lucene LIMIT $k)""",
        terms_tail("m", "m.key", MEMORY_LIVE, MEMORY_UNTIMELY + MEMORY_CUES),
        ", untimely: untimely",
    )
    + _held(
        "chunk",
        """MATCH (c:Chunk)
      SEARCH c IN (FULLTEXT INDEX chunk_terms FOR $lucene LIMIT $k)""",
        terms_tail("c", "c.id", CHUNK_LIVE, CHUNK_CUES),
        "",
    )
    + _held(
        "fact",
        """MATCH ()-[f:FACT]->()
      SEARCH f IN (FULLTEXT INDEX fact_terms FOR $lucene LIMIT $k)""",
        terms_tail("f", "f.id", FACT_VISIBLE, FACT_CUES),
        "",
    )
    + "\nRETURN stats, memory, chunk, fact\n",
)

HELD_HITS = Statement(
    "HELD_HITS",
    """CYPHER 25
CALL () {
  MATCH (m:Memory {scope_key: $scope_key})
  USING INDEX m:Memory(scope_key, key)
  WHERE m.key IN $notes
  RETURN collect(m.key) AS note_ids, collect("""
    + NOTE_HIT
    + """) AS notes
}
CALL () {
  MATCH (c:Chunk)
  WHERE c.id IN $chunks AND c.scope_key = $scope_key
  RETURN collect(c.id) AS chunk_ids, collect("""
    + CHUNK_HIT
    + """) AS chunks
}
RETURN note_ids, notes, chunk_ids, chunks""",
)
