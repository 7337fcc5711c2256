"""The newer statement first (docs/reference/recall.md, Levers): pure, no I/O.

Among the hits a recall answers, two that speak of the same matter (the cosine of their
embeddings at least ``threshold``, and said by the same speaker when both name one) are
ordered so that the later told ranks above the earlier: an update, a correction or a changed
preference above what it revises. The order reads the data only, never the question.

"Later told" (``later``) is a strict partial order: the later observed time; on a tie the
later stored; on a tie again, two turns (both name a speaker) of one document, the later place
in it. Two rows that compare neither way (equal times in two documents, two paragraphs of one
page) keep their order.

The walk (``order``) goes down the ranking once; at each place it looks at the next ``span``
hits below, and the latest of those near the hit there and told after it (ties to the better
ranked) is moved just above it. So a revision goes just above what it revises when the two
are close in the ranking, and the hit it displaced is then compared with the hits below it in
turn. A later hit of the same topic far below is not pulled up past the hits between, nor a
chain of later ones above the first: in a long conversation on one project most turns are
near in cosine, and the legs' order between them is worth more than their time. The set of
hits never changes; hits without an embedding are never moved.

With ``revision`` (``revises``) a pair is moved only when it looks like a revision: both
state values (numbers: a time, an amount, a score, a date) and the later states one the
earlier does not, a changed figure about the same matter. A later turn that tells another
event of the same topic, with no changed figure, keeps the legs' order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from palimpsest.domain.ranking.dedup import close_enough, cosine

__all__ = ["SPAN", "Placed", "Told", "later", "order", "revises", "speaker_of", "values_of"]

# How far below a hit its revision may be and still be moved above it (see the walk above).
SPAN = 2
_TURN = re.compile(r"^\s*([A-Za-z][\w'\u2019.-]{0,39}):\s+\S")
# A value a statement gives: digits, with their decimal, thousands, ratio or time marks
# ("120", "1,000", "19/20", "3.5", "10:30").
_VALUE = re.compile(r"\d+(?:[.,/:]\d+)*")


@dataclass(frozen=True, slots=True)
class Told:
    """When and where a hit was said: what ``later`` compares."""

    observed: datetime | None
    stored: datetime | None
    document: str | None = None
    place: int | None = None  # its place within ``document``
    speaker: str | None = None
    values: frozenset[str] = frozenset()  # the values it states (``values_of``)


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
    # A place is a time only in a conversation: of two paragraphs of a page, the lower one is
    # not a revision of the one above.
    if a.speaker is None or b.speaker is None:
        return False
    return a.place > b.place


def _same_speaker(a: Told, b: Told) -> bool:
    return a.speaker is None or b.speaker is None or a.speaker.casefold() == b.speaker.casefold()


def values_of(text: str) -> frozenset[str]:
    """The values (numbers) a text states, as written."""
    return frozenset(_VALUE.findall(text))


def revises(a: Told, b: Told) -> bool:
    """Whether ``a`` reads as a revision of ``b`` (told before it): both state values and
    ``a`` states one ``b`` does not."""
    return bool(a.values) and bool(b.values) and not a.values <= b.values


def speaker_of(text: str) -> str | None:
    """The speaker a turn starts with (``Name: ...``, ``user: ...``), lower-cased; None when
    it names none. Roles are lower-case in many transcripts, so unlike the speaker cue
    (``cues.speaker_of``) the name need not be capitalised."""
    m = _TURN.match(text)
    return None if m is None else m[1].casefold()


def order(
    vectors: Sequence[Sequence[float] | None],
    told: Sequence[Told],
    threshold: float,
    span: int = SPAN,
    revision: bool = False,
) -> list[Placed]:
    """The hits (best first, ``vectors`` and ``told`` one per hit) in their new order; with
    ``revision``, only pairs whose later ``revises`` the earlier are moved."""
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

    ranked = [Placed(i) for i in range(len(vectors))]
    place = 0
    while place < len(ranked):
        here = ranked[place].index
        newest: tuple[int, float] | None = None
        for below in range(place + 1, min(len(ranked), place + 1 + span)):
            j = ranked[below].index
            if not later(told[j], told[here]):
                continue
            if revision and not revises(told[j], told[here]):
                continue
            value = close(here, j)
            if value is not None and (
                newest is None or later(told[j], told[ranked[newest[0]].index])
            ):
                newest = (below, value)
        if newest is not None:
            moved = ranked.pop(newest[0])
            ranked.insert(place, Placed(moved.index, here, newest[1]))
        place += 1
    return ranked
