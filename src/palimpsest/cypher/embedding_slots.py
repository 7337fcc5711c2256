"""The statements of a model migration (``palimpsest reembed``): the schema record's state,
each slot's vector indexes, and the batches that fill or empty a slot.

These are maintenance statements over every scope, like the start-up migrations of
``cypher/schema.py``: a batch reads a row's embedded ``text`` and writes the new vector back to
the same row (found by element id, and only if its active vector is still the one the batch
read: a row rewritten meanwhile is picked up again). Nothing they read leaves the worker.

Each row whose target slot holds a vector also holds ``<slot property>_of``, the first two
components of the active vector it was made beside; a write that changes the text changes
the active vector, so a stale target vector is seen as missing. ``text_on`` of
``cypher/slots.py`` does not touch these statements (they are not scoped): each names its
slots itself.
"""

from __future__ import annotations

from typing import LiteralString

from palimpsest.cypher.driver.executor import SchemaStatement
from palimpsest.cypher.slots import SLOTS, Slot, other

# Each plane with a vector: its name, how a statement matches its rows.
PLANES: dict[str, LiteralString] = {
    "notes": "MATCH (n:Memory)",
    "noteVersions": "MATCH (n:MemoryVersion)",
    "chunks": "MATCH (n:Chunk)",
    "chunkVersions": "MATCH (n:ChunkVersion)",
    "facts": "MATCH ()-[n:FACT]->()",
    "passages": "MATCH (n:Passage)",
}
_PROP: dict[Slot, LiteralString] = {"a": "embedding", "b": "embedding_b"}
_SUFFIX: dict[Slot, LiteralString] = {"a": "", "b": "_b"}
# The vector indexes (one per label and slot): what they index, as cypher/schema.py's slot a.
_INDEXED: tuple[tuple[LiteralString, LiteralString], ...] = (
    ("memory", "(n:Memory)"),
    ("chunk", "(n:Chunk)"),
    ("fact", "()-[n:FACT]-()"),
    ("passage", "(n:Passage)"),
)


def _make(name: LiteralString, text: LiteralString) -> SchemaStatement:
    return SchemaStatement(name, text)


def _counts(plane: LiteralString, match: LiteralString) -> SchemaStatement:
    return _make(
        "COUNT_VECTORS_" + plane.upper(),
        match
        + """
WHERE n.embedding IS NOT NULL OR n.embedding_b IS NOT NULL
RETURN count(n.embedding) AS a, count(n.embedding_b) AS b,
       count(CASE WHEN n.embedding_b_of = n.embedding[0..2] THEN 1 END) AS b_beside_a,
       count(CASE WHEN n.embedding_of = n.embedding_b[0..2] THEN 1 END) AS a_beside_b
""",
    )


COUNTS = {plane: _counts(plane, match) for plane, match in PLANES.items()}


def _pending(plane: LiteralString, match: LiteralString, src: Slot, dst: Slot) -> SchemaStatement:
    a, t = _PROP[src], _PROP[dst]
    return _make(
        "PENDING_VECTORS_" + plane.upper() + "_" + dst.upper(),
        match
        + " WHERE n."
        + a
        + " IS NOT NULL AND n.text IS NOT NULL AND (n."
        + t
        + "_of IS NULL OR n."
        + t
        + "_of <> n."
        + a
        + "[0..2]) WITH n LIMIT $batch RETURN elementId(n) AS id, n.text AS text, n."
        + a
        + "[0..2] AS of",
    )


def _fill(plane: LiteralString, match: LiteralString, src: Slot, dst: Slot) -> SchemaStatement:
    a, t = _PROP[src], _PROP[dst]
    return _make(
        "FILL_VECTORS_" + plane.upper() + "_" + dst.upper(),
        "UNWIND $rows AS r "
        + match
        + " WHERE elementId(n) = r.id AND n."
        + a
        + "[0..2] = r.of SET n."
        + t
        + " = r.vector, n."
        + t
        + "_of = r.of RETURN count(n) AS written",
    )


def _stray(plane: LiteralString, match: LiteralString, src: Slot, dst: Slot) -> SchemaStatement:
    """Target vectors of rows that no longer have an active one (a note made unembedded)."""
    a, t = _PROP[src], _PROP[dst]
    return _make(
        "CLEAR_STRAY_VECTORS_" + plane.upper() + "_" + dst.upper(),
        match
        + " WHERE n."
        + a
        + " IS NULL AND n."
        + t
        + " IS NOT NULL WITH n LIMIT $batch REMOVE n."
        + t
        + ", n."
        + t
        + "_of RETURN count(n) AS cleared",
    )


def _drop(plane: LiteralString, match: LiteralString, old: Slot) -> SchemaStatement:
    """A slot's vectors removed (and the fingerprints of both slots: none is needed after)."""
    o = _PROP[old]
    return _make(
        "DROP_VECTORS_" + plane.upper() + "_" + old.upper(),
        match
        + " WHERE n."
        + o
        + " IS NOT NULL OR n.embedding_of IS NOT NULL OR n.embedding_b_of IS NOT NULL"
        + " WITH n LIMIT $batch REMOVE n."
        + o
        + ", n.embedding_of, n.embedding_b_of RETURN count(n) AS removed",
    )


# Keyed by (plane, the slot being filled or emptied); the source is always the other slot.
PENDING = {(p, t): _pending(p, m, other(t), t) for p, m in PLANES.items() for t in SLOTS}
FILL = {(p, t): _fill(p, m, other(t), t) for p, m in PLANES.items() for t in SLOTS}
STRAY = {(p, t): _stray(p, m, other(t), t) for p, m in PLANES.items() for t in SLOTS}
DROP = {(p, old): _drop(p, m, old) for p, m in PLANES.items() for old in SLOTS}


def _create_index(label: LiteralString, pattern: LiteralString, slot: Slot) -> SchemaStatement:
    p = _PROP[slot]
    return _make(
        "CREATE_VECTOR_INDEX_" + label.upper() + "_" + slot.upper(),
        "CYPHER 25 CREATE VECTOR INDEX "
        + label
        + "_embedding"
        + _SUFFIX[slot]
        + " IF NOT EXISTS FOR "
        + pattern
        + " ON n."
        + p
        + " WITH [n.scope_key] OPTIONS $options",
    )


def _drop_index(label: LiteralString, slot: Slot) -> SchemaStatement:
    name = label + "_embedding" + _SUFFIX[slot]
    return _make(
        "DROP_VECTOR_INDEX_" + label.upper() + "_" + slot.upper(),
        "DROP INDEX " + name + " IF EXISTS",
    )


CREATE_INDEXES = {s: tuple(_create_index(label, p, s) for label, p in _INDEXED) for s in SLOTS}
DROP_INDEXES = {s: tuple(_drop_index(label, s) for label, _ in _INDEXED) for s in SLOTS}


def index_names(slot: Slot) -> list[str]:
    return [label + "_embedding" + _SUFFIX[slot] for label, _ in _INDEXED]


# The schema record's id (its one node), passed as ``$info``.
INFO_ID = "palimpsest"

# The state of the schema record (made at start-up by ``cypher/schema.MERGE_SCHEMA_INFO``).
_STATE: LiteralString = """
RETURN s.embedding_model AS model, s.embedding_dimensions AS dimensions,
       s.embedding_slot AS slot,
       s.target_model AS target_model, s.target_dimensions AS target_dimensions,
       s.old_model AS old_model, s.old_dimensions AS old_dimensions,
       s.aborted_model AS aborted_model, s.aborted_dimensions AS aborted_dimensions,
       s.migration_started_at AS started_at, s.cutover_at AS cutover_at
"""

READ_STATE = _make("READ_EMBEDDING_STATE", "MATCH (s:SchemaInfo {id: $info})" + _STATE)

# A migration starts only from the steady state (no target, no old slot left, no aborted
# one's vectors still being removed), or resumes for the same model; anything else changes
# nothing and answers the state for the refusal.
START = _make(
    "START_EMBEDDING_MIGRATION",
    """
MATCH (s:SchemaInfo {id: $info})
WITH s, s.target_model IS NULL AND s.old_model IS NULL AND s.aborted_model IS NULL
        AND s.embedding_model <> $model AS fresh
SET s.target_model = CASE WHEN fresh THEN $model ELSE s.target_model END,
    s.target_dimensions = CASE WHEN fresh THEN $dimensions ELSE s.target_dimensions END,
    s.migration_started_at = CASE WHEN fresh THEN datetime() ELSE s.migration_started_at END
"""
    + _STATE,
)

# The active slot becomes the old one, the target the active one, in one write.
CUTOVER = _make(
    "CUTOVER_EMBEDDING",
    """
MATCH (s:SchemaInfo {id: $info})
WHERE s.target_model = $model
SET s.old_model = s.embedding_model, s.old_dimensions = s.embedding_dimensions,
    s.embedding_model = s.target_model, s.embedding_dimensions = s.target_dimensions,
    s.embedding_slot = $slot,
    s.target_model = null, s.target_dimensions = null, s.cutover_at = datetime()
"""
    + _STATE,
)

FORGET_OLD = _make(
    "FORGET_OLD_EMBEDDING",
    """
MATCH (s:SchemaInfo {id: $info})
WHERE s.old_model = $model
SET s.old_model = null, s.old_dimensions = null, s.migration_started_at = null,
    s.cutover_at = null
"""
    + _STATE,
)

# ``reembed --abort``: the target becomes the aborted model, whose vectors and indexes are
# then removed (the active model is not touched); with no target, each server's follow task
# stops embedding writes with it at its next read.
ABORT = _make(
    "ABORT_EMBEDDING_MIGRATION",
    """
MATCH (s:SchemaInfo {id: $info})
WHERE s.target_model = $model
SET s.aborted_model = s.target_model, s.aborted_dimensions = s.target_dimensions,
    s.target_model = null, s.target_dimensions = null
"""
    + _STATE,
)

FORGET_ABORTED = _make(
    "FORGET_ABORTED_EMBEDDING",
    """
MATCH (s:SchemaInfo {id: $info})
WHERE s.aborted_model = $model
SET s.aborted_model = null, s.aborted_dimensions = null, s.migration_started_at = null
"""
    + _STATE,
)

# The new slot's indexes are populated before recall is switched to them.
AWAIT_INDEXES = _make("AWAIT_VECTOR_INDEXES", "CALL db.awaitIndexes($seconds)")
