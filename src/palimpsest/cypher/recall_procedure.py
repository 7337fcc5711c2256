"""The full-text legs on the procedure engine: ``palimpsest.textLeg`` (our Neo4j extension,
``local/neo4j/extension``) reads the rows of the scope that the terms match through the
kernel API and scores them by scope-local BM25 with the weights the resolver passes; the
statement keeps the best ``$top`` and applies the same row filters as the Cypher legs
(``MEMORY_LIVE``, ``CHUNK_LIVE``, ``FACT_VISIBLE``), re-checking the scope, so each filter has
one copy. ``matched`` is how many rows of the scope the terms matched (null when none did):
fewer rows back than matched means the answer was cut at ``$top``.

Whether the server has the extension, and of which version, is read at start-up
(``cypher/schema.py``: ``EXTENSION_LISTED``, ``EXTENSION_VERSION``).
"""

from typing import LiteralString

from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import FACT_VISIBLE
from palimpsest.cypher.recall import CHUNK_LIVE, MEMORY_LIVE, MEMORY_UNTIMELY

_CALL: LiteralString = """CYPHER 25
CALL palimpsest.textLeg($kind, $scope_key, $sets, $unless, $terms, $weights, $k1, $b,
                        $avg_length, $top)
"""


def _tail(
    var: LiteralString, ident: LiteralString, live: LiteralString, extra: LiteralString = ""
) -> LiteralString:
    return (
        "WITH "
        + var
        + ", score, matched WHERE "
        + var
        + ".scope_key = $scope_key\nRETURN collect("
        + ident
        + ") AS ids, collect(score) AS scores, collect(coalesce("
        + live
        + ", false)) AS live, max(matched) AS matched"
        + extra
    )


PROC_TERMS_MEMORY = Statement(
    "PROC_TERMS_MEMORY",
    _CALL + "YIELD node AS m, score, matched\n" + _tail("m", "m.key", MEMORY_LIVE, MEMORY_UNTIMELY),
)

PROC_TERMS_CHUNKS = Statement(
    "PROC_TERMS_CHUNKS",
    _CALL + "YIELD node AS c, score, matched\n" + _tail("c", "c.id", CHUNK_LIVE),
)

PROC_TERMS_FACTS = Statement(
    "PROC_TERMS_FACTS",
    _CALL + "YIELD relationship AS f, score, matched\n" + _tail("f", "f.id", FACT_VISIBLE),
)

# What only a server with the extension can plan (start-up's warm-up skips them elsewhere).
NAMES = frozenset(s.name for s in (PROC_TERMS_MEMORY, PROC_TERMS_CHUNKS, PROC_TERMS_FACTS))
