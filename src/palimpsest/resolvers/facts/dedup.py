"""Near-duplicate facts merge on write (docs/reference/facts.md, Duplicates).

``write_batch`` calls ``merge_into_kept`` before the batch is written, in the write's
transaction (under the scope's lock when the batch holds single-valued facts). A fact that
near-duplicates a stored, unretired fact of the same scope, subject and predicate (see
``domain.ranking.dedup``), or an earlier fact of the same batch, is rewritten to that fact's
natural key, object and predicate: the write then re-asserts the kept fact, which adds the
new fact's source (or its writer) to it, exactly as re-asserting a natural key does. Nothing
is stored twice and the result says ``merged``. A fact given its own natural key is named by
it: it is never merged by similarity (re-asserting that key still adds a source).

``merge_and_band`` also returns the band (docs/extraction.md, Judging conflicts): for each
row that did not merge, the stored facts of its subject and predicate whose cosine is at or
above the judge's floor and whose object differs, and the earlier rows of the same batch that
are so (two new facts of one batch may conflict as well as a new and a stored one); the write
records them as pairs to judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from palimpsest.cypher import dedup as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.ranking import dedup
from palimpsest.resolvers.facts.inputs import VALUE_TYPE, type_label
from palimpsest.schema.fact_rows import FactRow, near_duplicate_params


@dataclass(frozen=True, slots=True)
class Close:
    """A fact close to a written row (``index``) that the row did not merge into: a stored
    fact (``fact_id``), or an earlier row of the same batch (``other``, its index; its id is
    known once the batch is written, and ``fact_id`` is empty)."""

    index: int
    fact_id: str
    cosine: float
    other: int | None = None


async def merge_into_kept(
    tx: ScopedTx,
    rows: Sequence[FactRow],
    threshold: float,
    new_subjects: frozenset[int] = frozenset(),
) -> list[FactRow]:
    """The rows, each near-duplicate pointed at the fact it duplicates (``merged`` true).

    ``new_subjects``: the indexes of rows whose subject is known to be no stored entity, so
    no stored fact can be theirs (they may still duplicate an earlier row of the batch)."""
    merged, _ = await merge_and_band(tx, rows, threshold, new_subjects)
    return merged


async def merge_and_band(
    tx: ScopedTx,
    rows: Sequence[FactRow],
    threshold: float,
    new_subjects: frozenset[int] = frozenset(),
    floor: float | None = None,
) -> tuple[list[FactRow], list[Close]]:
    """``merge_into_kept``'s rows, and with a ``floor`` the band: the stored facts close to a
    row that did not merge (cosine at or above ``floor``, another object)."""
    asked = [r for r in rows if not r.key_given and r.index not in new_subjects]
    if not any(not r.key_given for r in rows):
        return list(rows), []
    params = near_duplicate_params(asked)
    found = await tx.run(q.NEAR_DUPLICATE_FACTS, {"facts": params}) if params else []
    stored: dict[int, list[Row]] = {}
    for c in found:
        stored.setdefault(c["index"], []).append(c)
    earlier: list[FactRow] = []
    band: list[Close] = []
    for row in rows:
        if not row.key_given:
            kept = _best(row, stored.get(row.index, []), threshold)
            if kept is None:
                kept = _best(row, [_as_candidate(e) for e in earlier], threshold)
            if kept is not None:
                row = _point_at(row, kept)
            elif floor is not None:
                band += _close(row, stored.get(row.index, []), earlier, floor)
        earlier.append(row)
    return earlier, band


# Stored facts one written fact is paired with at most (the closest): a subject with many
# values of one predicate would otherwise pair every new value with every stored one.
MAX_PAIRS_PER_FACT = 5


def _close(
    row: FactRow, candidates: Sequence[Any], earlier: Sequence[FactRow], floor: float
) -> list[Close]:
    """The stored candidates and the earlier rows of the batch ``row`` pairs with."""
    out: list[Close] = []
    for c in candidates:
        cos = c["cosine"]
        if _differs(row, c) and dedup.close_enough(cos, floor):
            out.append(Close(row.index, str(c["id"]), float(cos)))
    for e in earlier:
        if e.embedding is None or row.embedding is None:
            continue
        if (e.subject_type, e.subject_norm, e.predicate_key) != (
            row.subject_type,
            row.subject_norm,
            row.predicate_key,
        ):
            continue
        cos = dedup.cosine(e.embedding, row.embedding)
        if _differs(row, _as_candidate(e)) and dedup.close_enough(cos, floor):
            # An earlier row that merged is written as the fact it merged into: the pair
            # names that fact, as it would once the batch is stored.
            out.append(Close(row.index, "", float(cos), other=e.index))
    out.sort(key=lambda c: (-c.cosine, c.fact_id, c.other or 0))
    return out[:MAX_PAIRS_PER_FACT]


def _differs(row: FactRow, c: Any) -> bool:
    """Another fact (another key) with another object: two values that may conflict."""
    same_object = c["object_type"] == row.object_type and dedup.fold(
        c["object_name"]
    ) == dedup.fold(row.object_name)
    return bool(c["natural_key"] != row.natural_key and not same_object)


def _as_candidate(row: FactRow) -> dict[str, Any]:
    return {
        "natural_key": row.natural_key,
        "predicate": row.predicate,
        "object_type": row.object_type,
        "object_norm": row.object_norm,
        "object_name": row.object_name,
        "valid_at": row.valid_at,
        "subject_type": row.subject_type,
        "subject_norm": row.subject_norm,
        "predicate_key": row.predicate_key,
        "embedding": row.embedding,
        "cosine": None,
        "id": row.natural_key,
    }


def _best(row: FactRow, candidates: Sequence[Any], threshold: float) -> Any | None:
    """The candidate ``row`` duplicates: an object that folds to the same first, then the
    highest cosine (ties by id), or None."""
    best: tuple[int, float, str] | None = None
    chosen = None
    for c in candidates:
        if c["natural_key"] == row.natural_key or c["valid_at"] != row.valid_at:
            continue
        if "subject_norm" in c and (
            (c["subject_type"], c["subject_norm"], c["predicate_key"])
            != (row.subject_type, row.subject_norm, row.predicate_key)
        ):
            continue
        same_object = c["object_type"] == row.object_type and dedup.fold(
            c["object_name"]
        ) == dedup.fold(row.object_name)
        cos = c["cosine"]
        if cos is None and "embedding" in c:
            cos = dedup.cosine(c["embedding"], row.embedding or [])
        if not same_object and not dedup.close_enough(cos, threshold):
            continue
        rank = (0 if same_object else 1, -(cos or 0.0), str(c["id"]))
        if best is None or rank < best:
            best, chosen = rank, c
    return chosen


def _point_at(row: FactRow, kept: Any) -> FactRow:
    """The row rewritten as the kept fact (its key, predicate and object)."""
    return replace(
        row,
        natural_key=kept["natural_key"],
        predicate=kept["predicate"],
        object_type=kept["object_type"],
        object_norm=kept["object_norm"],
        object_name=kept["object_name"],
        object_label=type_label(kept["object_type"]),
        object_is_value=kept["object_type"] == VALUE_TYPE,
        merged=True,
    )
