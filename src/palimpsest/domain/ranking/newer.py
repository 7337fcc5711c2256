"""The newer statement first (docs/reference/recall.md, Levers): pure, no I/O.

Among the hits a recall answers, two that speak of the same matter (their embeddings at
least ``threshold`` apart in cosine, and said by the same speaker when both name one) are
ordered so that the later told ranks above the earlier: an update, a correction or a changed
preference above what it revises. The order reads the data only, never the question.

"Later told" (``Told``) is a strict partial order: the later observed time; on a tie the
later stored; on a tie again, within one document, the later place in it. Two rows that
compare neither way (equal times in two documents) keep their order.

The walk (``order``) takes the best remaining hit; while a remaining hit is near it and told
later, that one is taken instead (the latest of them, ties to the better ranked), and so on
along the chain; the hit taken is placed, and the walk starts again from the best remaining.
So a revision goes just above what it revises, everything else keeps its relative order, and
the set of hits is never changed. Hits without an embedding are never moved by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from palimpsest.domain.ranking.dedup import close_enough, cosine

__all__ = ["Placed", "Told", "later", "order"]


@dataclass(frozen=True, slots=True)
class Told:
    """When and where a hit was said: what ``later`` compares."""

    observed: datetime | None
    stored: datetime | None
    document: str | None = None
    place: int | None = None  # its place within ``document``
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class Placed:
    """One hit of the new order: its index in the input, and when it was moved, the index
    of the hit it was placed just above and the cosine of the two."""

    index: int
    above: int | None = None
    cosine: float | None = None


def _after(a: datetime | None, b: datetime | None) -> bool | None:
    """True/False when the two differ, None when they tie or either is unknown."""
    if a is None or b is None or a == b:
        return None
    return a > b


def later(a: Told, b: Told) -> bool:
    """Whether ``a`` was told after ``b`` (observed, then stored, then place in one document)."""
    for first, second in ((a.observed, b.observed), (a.stored, b.stored)):
        found = _after(first, second)
        if found is not None:
            return found
        if (first is None) != (second is None):  # one time unknown: no order
            return False
    if a.document is None or a.document != b.document or a.place is None or b.place is None:
        return False
    return a.place > b.place


def _same_speaker(a: Told, b: Told) -> bool:
    return a.speaker is None or b.speaker is None or a.speaker.casefold() == b.speaker.casefold()


def order(
    vectors: Sequence[Sequence[float] | None], told: Sequence[Told], threshold: float
) -> list[Placed]:
    """The hits (best first, ``vectors`` and ``told`` one per hit) in their new order."""
    if len(vectors) != len(told):
        raise ValueError("one vector and one Told per hit")
    near: dict[tuple[int, int], float] = {}

    def close(i: int, j: int) -> float | None:
        a, b = vectors[i], vectors[j]
        if a is None or b is None or not _same_speaker(told[i], told[j]):
            return None
        key = (min(i, j), max(i, j))
        if key not in near:
            near[key] = cosine(a, b)
        value = near[key]
        return value if close_enough(value, threshold) else None

    remaining = list(range(len(vectors)))
    out: list[Placed] = []
    while remaining:
        current, above, cos = remaining[0], None, None
        while True:
            newest: tuple[int, float] | None = None
            for j in remaining:
                if j == current or not later(told[j], told[current]):
                    continue
                value = close(current, j)
                if value is not None and (newest is None or later(told[j], told[newest[0]])):
                    newest = (j, value)
            if newest is None:
                break
            above, current, cos = current, newest[0], newest[1]
        out.append(Placed(current, above, cos))
        remaining.remove(current)
    return out
