"""How the suites and the bench summarise measured times."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation between ranks (numpy's default)."""
    if not values:
        raise ValueError("no values")
    if not 0 <= pct <= 100:
        raise ValueError("pct must be within 0-100")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
