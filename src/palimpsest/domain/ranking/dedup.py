"""Near-duplicates (docs/reference/facts.md, Duplicates): pure, no I/O.

Two facts of one subject and predicate are near-duplicates when they start at the same time
(the same ``valid_at``, or both without one) and either their objects are one after ``fold``
(case, punctuation and whitespace ignored, same object type) or the cosine of their text
embeddings is at or above the threshold. Two recall hits are near-duplicates when the cosine
of their embeddings is at or above the caller's ``dedup`` threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from palimpsest.domain.names import fold
from palimpsest.errors import InvalidArgument

__all__ = ["EPSILON", "check_threshold", "close_enough", "cosine", "fold"]


# Float rounding: two identical texts embed to a cosine a hair under 1.0.
EPSILON = 1e-6


def close_enough(value: float | None, threshold: float) -> bool:
    return value is not None and value >= threshold - EPSILON


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def check_threshold(value: float | None, name: str = "dedup") -> float | None:
    """A cosine threshold in (0, 1], or None (off)."""
    if value is None:
        return None
    if not math.isfinite(value) or not 0.0 < value <= 1.0:
        raise InvalidArgument(f"{name} must be a cosine threshold in (0, 1]")
    return value
