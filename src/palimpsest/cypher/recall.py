"""The legs of hybrid recall, per kind of row, and the final load of the chosen rows.

Candidate legs return only what ranking needs: the row id, its score (vector) or its stored
terms, frequencies and length (full-text), a ``live`` flag for the row filters (expiry, key
prefix, validity), so the resolver can tell a short pool (over-fetch) from a small scope
(exact fallback), and the ``cues`` the time window and the boosts read (``observedAt`` as
epoch milliseconds, so no temporal value is built for a row fusion drops); full-text legs
read the cues of their pool only, once scored (``CUES_*``). The top-k that survives fusion
is then loaded once per scope, all kinds in one statement (``LOAD_HITS``), with its
provenance; vector legs over notes and chunks and the cue reads return that projection
(``NOTE_HIT``, ``CHUNK_HIT``) for their rows, so only rows no leg returned are loaded.

Vector legs filter on ``scope_key`` inside the index (``SEARCH ... WHERE``); their scores
are Neo4j's normalised cosine, ``(1 + cos) / 2``. Full-text legs ask Lucene only *which*
rows of the scope hold the query terms (the scope is a required clause of the query, and
the limit is the scope's own count of such rows), never how well: BM25 is computed by the
resolver with the scope's own statistics. Every leg re-checks the scope after the index call.
"""

from typing import LiteralString

from palimpsest.cypher.driver.cosine import exact_top
from palimpsest.cypher.driver.executor import Statement
from palimpsest.cypher.facts import FACT_ROW, FACT_VISIBLE
from palimpsest.cypher.memory import NOTE_VALID

_MEMORY_KEPT: LiteralString = (
    "m.key STARTS WITH $prefix AND (m.expires_at IS NULL OR m.expires_at > $now)"
)
# A dated note outside ``$as_of`` is dropped like a fact the time view drops; ``untimely``
# tells those apart from notes dropped for expiry or prefix, for the time-filter report.
_MEMORY_TIMELY: LiteralString = "($include_retired OR " + NOTE_VALID + ")"
MEMORY_LIVE: LiteralString = _MEMORY_KEPT + " AND " + _MEMORY_TIMELY
MEMORY_UNTIMELY: LiteralString = (
    ", collect(coalesce(" + _MEMORY_KEPT + " AND NOT " + _MEMORY_TIMELY + ", false)) AS untimely"
)
# A current chunk is live unless a ``$known_at`` read asks for a time before its version
# began; the versions closed since are read by EXACT_CHUNK_VERSIONS (cypher/revisions.py).
CHUNK_LIVE: LiteralString = (
    "c.index IS NOT NULL AND ($known_at IS NULL OR "
    "coalesce(c.version_at, c.created_at) <= $known_at)"
)


# What a hit shows of a note or a chunk (the final load's projection). Vector legs and the
# full-text legs' cue reads return it for the rows they keep (``rows``), so a top-k whose rows
# all came that way needs no final load.
NOTE_HIT: LiteralString = (
    "m {.key, .scope, .text, .created_at, .observed_at, .tenant_id, .session_id, .run_id, "
    ".agent_name, .model, .origin, .writer_id, .compaction_generation}"
)
CHUNK_HIT: LiteralString = (
    "c {.id, .scope, .document_id, .type, .text, .observed_at, .created_at, .tenant_id, "
    ".session_id, .run_id, .agent_name, .model, .origin, .writer_id, .compaction_generation}"
)
_NOTE_ROWS: LiteralString = ", collect(" + NOTE_HIT + ") AS rows"
_CHUNK_ROWS: LiteralString = ", collect(" + CHUNK_HIT + ") AS rows"


def _cues(var: LiteralString, dated: LiteralString) -> LiteralString:
    """What the time window and the boosts read, per row: [observedAt in epoch ms, years,
    has a time expression, speaker, has a validity interval, resolved time ranges' starts
    and ends in epoch days]. A list per row, so rows with nulls keep their place
    (``collect`` skips nulls)."""
    return (
        ", collect(["
        + var
        + ".observed_at.epochMillis, "
        + var
        + ".years, coalesce("
        + var
        + ".has_time, false), "
        + var
        + ".speaker, "
        + dated
        + ", "
        + var
        + ".t_start, "
        + var
        + ".t_end]) AS cues"
    )


MEMORY_CUES = _cues("m", "(m.valid_at IS NOT NULL OR m.invalid_at IS NOT NULL)")
CHUNK_CUES = _cues("c", "false")
FACT_CUES = _cues("f", "(f.valid_at IS NOT NULL OR f.invalid_at IS NOT NULL)")


def _scored(
    var: LiteralString, ident: LiteralString, live: LiteralString, extra: LiteralString = ""
) -> LiteralString:
    """The tail of a vector leg: one record of parallel lists in rank order (one record
    decodes far faster than one per row); ``extra``: more list columns."""
    return (
        "\nWITH "
        + var
        + ", score\nWHERE "
        + var
        + ".scope_key = $scope_key\nRETURN collect("
        + ident
        + ") AS ids, collect(score) AS scores, collect(coalesce("
        + live
        + ", false)) AS live"
        + extra
    )


_MEMORY_SCORED = _scored("m", "m.key", MEMORY_LIVE, MEMORY_UNTIMELY + MEMORY_CUES + _NOTE_ROWS)
_CHUNK_SCORED = _scored("c", "c.id", CHUNK_LIVE, CHUNK_CUES + _CHUNK_ROWS)
_FACT_SCORED = _scored("f", "f.id", FACT_VISIBLE, FACT_CUES)
# The vector legs' tails, shared with the whole-scope legs (``cypher/recall_whole.py``).
MEMORY_SCORED, CHUNK_SCORED, FACT_SCORED = _MEMORY_SCORED, _CHUNK_SCORED, _FACT_SCORED


def terms_tail(
    var: LiteralString, ident: LiteralString, live: LiteralString, extra: LiteralString = ""
) -> LiteralString:
    """The tail of a full-text leg: each row's stored terms, frequencies and length, as one
    record of parallel lists (the resolver picks the query terms' frequencies out)."""
    return (
        "\nWITH "
        + var
        + " WHERE "
        + var
        + ".scope_key = $scope_key\nRETURN collect("
        + ident
        + ") AS ids, collect(coalesce("
        + var
        + ".ft_len, 0)) AS lens, collect(coalesce("
        + live
        + ", false)) AS live, collect(coalesce("
        + var
        + ".ft, '')) AS ft, collect(coalesce("
        + var
        + ".ft_tf, [])) AS tf"
        + extra
    )


VECTOR_MEMORY = Statement(
    "VECTOR_MEMORY",
    """CYPHER 25
MATCH (m:Memory)
  SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector WHERE m.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score"""
    + _MEMORY_SCORED,
)

TERMS_MEMORY = Statement(
    "TERMS_MEMORY",
    """CYPHER 25
MATCH (m:Memory)
  SEARCH m IN (FULLTEXT INDEX memory_terms FOR $lucene LIMIT $k)"""
    + terms_tail("m", "m.key", MEMORY_LIVE, MEMORY_UNTIMELY),
)

VECTOR_CHUNKS = Statement(
    "VECTOR_CHUNKS",
    """CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (VECTOR INDEX chunk_embedding FOR $vector WHERE c.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score"""
    + _CHUNK_SCORED,
)

TERMS_CHUNKS = Statement(
    "TERMS_CHUNKS",
    """CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (FULLTEXT INDEX chunk_terms FOR $lucene LIMIT $k)"""
    + terms_tail("c", "c.id", CHUNK_LIVE),
)

VECTOR_FACTS = Statement(
    "VECTOR_FACTS",
    """CYPHER 25
MATCH ()-[f:FACT]->()
  SEARCH f IN (VECTOR INDEX fact_embedding FOR $vector WHERE f.scope_key = $scope_key
               LIMIT $k)
  SCORE AS score"""
    + _FACT_SCORED,
)

TERMS_FACTS = Statement(
    "TERMS_FACTS",
    """CYPHER 25
MATCH ()-[f:FACT]->()
  SEARCH f IN (FULLTEXT INDEX fact_terms FOR $lucene LIMIT $k)"""
    + terms_tail("f", "f.id", FACT_VISIBLE),
)

# The cues of the rows a full-text leg kept for its pool, read after scoring: a leg reads
# every scope row holding the query's rarest terms (hundreds at 100k rows), and reading their
# cues there was a third of the leg's time. Notes by key use the (scope_key, key) index: the
# planner would otherwise pick the index on scope_key alone and read every note of the scope.
CUES_MEMORY = Statement(
    "CUES_MEMORY",
    """
MATCH (m:Memory {scope_key: $scope_key})
USING INDEX m:Memory(scope_key, key)
WHERE m.key IN $ids
RETURN collect(m.key) AS ids"""
    + MEMORY_CUES
    + _NOTE_ROWS,
)

CUES_CHUNKS = Statement(
    "CUES_CHUNKS",
    """
MATCH (c:Chunk)
WHERE c.id IN $ids AND c.scope_key = $scope_key
RETURN collect(c.id) AS ids"""
    + CHUNK_CUES
    + _CHUNK_ROWS,
)

CUES_FACTS = Statement(
    "CUES_FACTS",
    """
MATCH ()-[f:FACT]->()
WHERE f.id IN $ids AND f.scope_key = $scope_key
RETURN collect(f.id) AS ids"""
    + FACT_CUES,
)

# Exact legs: every embedded row of the scope, scored by cosine (float32, as the index), the
# near-ties re-scored from the stored doubles (``cypher/driver/cosine.py``). The planner uses them
# when the whole-scope legs cannot answer, and when the index returns fewer rows than asked.
EXACT_CHUNKS = Statement(
    "EXACT_CHUNKS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WHERE c.embedding IS NOT NULL
WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
ORDER BY score DESC, c.id
WITH collect(c) AS found, collect(score) AS ranked"""
    + exact_top("c", "c.id")
    + _CHUNK_SCORED,
)

# A ``$known_at`` read of documents: the closed chunk versions that were current then. They
# are in no index (only ``:Chunk`` is), so this is an exact scan of the scope's versions:
# reading the past costs more, the present nothing.
EXACT_CHUNK_VERSIONS = Statement(
    "EXACT_CHUNK_VERSIONS",
    """
MATCH (c:ChunkVersion {scope_key: $scope_key})
WHERE c.embedding IS NOT NULL AND c.index IS NOT NULL
  AND c.version_at <= $known_at AND c.expired_at > $known_at
WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
ORDER BY score DESC, c.id
WITH collect(c) AS found, collect(score) AS ranked"""
    + exact_top("c", "c.id")
    + _scored("c", "c.id", "true", CHUNK_CUES),
)

EXACT_MEMORY = Statement(
    "EXACT_MEMORY",
    """
MATCH (m:Memory {scope_key: $scope_key})
WHERE m.embedding IS NOT NULL
WITH m, vector.similarity.cosine(m.embedding, $vector) AS score
ORDER BY score DESC, m.key
WITH collect(m) AS found, collect(score) AS ranked"""
    + exact_top("m", "m.key")
    + _MEMORY_SCORED,
)

EXACT_FACTS = Statement(
    "EXACT_FACTS",
    """
MATCH ()-[f:FACT {scope_key: $scope_key}]->()
WHERE f.embedding IS NOT NULL
WITH f, vector.similarity.cosine(f.embedding, $vector) AS score
ORDER BY score DESC, f.id
WITH collect(f) AS found, collect(score) AS ranked"""
    + exact_top("f", "f.id")
    + _FACT_SCORED,
)

# The final load: the top-k fusion kept, every kind of one scope in one statement (notes by
# the (scope_key, key) index, as in CUES_MEMORY).
LOAD_HITS = Statement(
    "LOAD_HITS",
    """CYPHER 25
CALL () {
  MATCH (m:Memory {scope_key: $scope_key})
  USING INDEX m:Memory(scope_key, key)
  WHERE m.key IN $notes
  RETURN collect("""
    + NOTE_HIT
    + """) AS notes
}
CALL () {
  MATCH (c:Chunk)
  WHERE c.id IN $chunks AND c.scope_key = $scope_key
    AND ($known_at IS NULL OR coalesce(c.version_at, c.created_at) <= $known_at)
  RETURN collect("""
    + CHUNK_HIT
    + """) AS current
}
CALL () {
  MATCH (c:ChunkVersion {scope_key: $scope_key})
  WHERE $known_at IS NOT NULL AND c.id IN $chunks
    AND c.version_at <= $known_at AND c.expired_at > $known_at
  RETURN collect("""
    + CHUNK_HIT
    + """) AS past
}
CALL () {
  MATCH (s:Entity)-[f:FACT]->(o:Entity)
  WHERE f.id IN $facts AND f.scope_key = $scope_key
  RETURN collect("""
    + FACT_ROW
    + """) AS facts
}
RETURN notes, current + past AS chunks, facts""",
)
