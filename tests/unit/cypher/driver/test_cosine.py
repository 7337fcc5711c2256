"""The float32 error bound of ``cypher/driver/cosine.py``, against float32 cosines computed the ways
an index may compute them (summed in order or pairwise, normalised first or divided by the
norms, elements rounded or truncated to float32), on random and adversarial vectors."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.cypher.driver.cosine import BAND, RESCORED, exact_top

F32 = np.float32
Cosine32 = Callable[[np.ndarray, np.ndarray], float]


def eps(d: int) -> float:
    """The bound the module documents: ``(d + 8) 2^-23``, half the band."""
    match = re.fullmatch(r"\(size\(\$vector\) \+ (\d+)\) \* ([0-9.E-]+)", BAND)
    assert match is not None
    return (d + int(match.group(1))) * float(match.group(2)) / 2


def truncated(v: np.ndarray) -> np.ndarray:
    """Each element rounded toward zero to float32 (the worst conversion)."""
    r = v.astype(F32)
    over = np.abs(r.astype(np.float64)) > np.abs(v)
    r[over] = np.nextafter(r[over], F32(0))
    return r


def sequential(a: np.ndarray, b: np.ndarray) -> float:
    s = F32(0)
    for x, y in zip(a, b, strict=True):
        s = F32(s + F32(x * y))
    return float(s)


def divided(dot: Callable[[np.ndarray, np.ndarray], float]) -> Cosine32:
    """Dot product over the norms' square root (as Lucene's cosine does)."""

    def cosine(x: np.ndarray, q: np.ndarray) -> float:
        return float(F32(dot(x, q) / math.sqrt(float(dot(x, x)) * float(dot(q, q)))))

    return cosine


def normalised(dot: Callable[[np.ndarray, np.ndarray], float]) -> Cosine32:
    """Each vector divided by its float32 norm first, then the dot product."""

    def cosine(x: np.ndarray, q: np.ndarray) -> float:
        xn = (x / F32(math.sqrt(dot(x, x)))).astype(F32)
        qn = (q / F32(math.sqrt(dot(q, q)))).astype(F32)
        return dot(xn, qn)

    return cosine


def pairwise(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))  # float32 in, numpy's blocked float32 sum


WAYS: list[Cosine32] = [divided(sequential), divided(pairwise), normalised(sequential)]


def exact(x: np.ndarray, q: np.ndarray) -> float:
    """The re-score's formula (``RESCORED``), in double precision, summed left to right."""
    dot = xx = qq = 0.0
    for a, b in zip(x.tolist(), q.tolist(), strict=True):
        dot, xx, qq = dot + a * b, xx + a * a, qq + b * b
    return (1 + dot / math.sqrt(xx * qq)) / 2


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    d=st.sampled_from([3, 16, 384, 768, 1536]),
    shape=st.sampled_from(["normal", "spiky", "near", "opposite"]),
    truncate=st.booleans(),
)
def test_every_float32_cosine_is_within_the_bound(
    seed: int, d: int, shape: str, truncate: bool
) -> None:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=d)
    x = rng.normal(size=d)
    if shape == "spiky":  # a few large elements among tiny ones: the widest dynamic range
        x = x * np.where(rng.random(d) < 0.05, 1e3, 1e-3)
    elif shape == "near":  # the scores near 1, where float32's step is widest
        x = q + rng.normal(size=d) * 1e-3
    elif shape == "opposite":
        x = -q + rng.normal(size=d) * 1e-3
    x32, q32 = (truncated(x), truncated(q)) if truncate else (x.astype(F32), q.astype(F32))
    want = exact(x, q)
    for way in WAYS:
        score = float(F32((1 + F32(way(x32, q32))) / 2))
        assert abs(score - want) < eps(d)


def test_the_bound_is_what_the_docstring_derives() -> None:
    u = 2.0**-24
    for d in (384, 768, 1536, 3072):
        g = d * u / (1 - d * u)
        assert g + 7 * u < (d + 8) * u < eps(d) == 2 * (d + 8) * u
    assert abs(eps(384) - 4.67e-5) < 1e-7


def test_the_rescore_reads_only_the_near_ties_vectors() -> None:
    tail = exact_top("c", "c.id")
    assert tail.count("c.embedding") == 1  # once, and only under ``near``
    assert "CASE WHEN near THEN c.embedding END AS e" in tail
    assert RESCORED in tail
    assert tail.rstrip().endswith("LIMIT $k")
