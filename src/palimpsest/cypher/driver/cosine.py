"""The exact top ``$k`` of a vector leg over a small scope: float32 scores, then the near-ties
re-scored from the stored doubles.

Why: Neo4j's ``vector.similarity.cosine`` and the vector index compute the same score (the
function "is identical to that of the latest vector index provider"), in float32: the stored
``LIST<FLOAT>`` doubles are rounded to float32 and the cosine is summed in float32. Two rows
whose true cosines differ by less than a float32 step can then score equal (and be ordered by
id) or in the wrong order. The exact score of a row is the cosine of the stored doubles,
computed in double precision by one fixed formula (``RESCORED``): ``(1 + x.q / sqrt(x.x *
q.q)) / 2``, each dot product summed left to right. That is what both the exact scan
(``EXACT_*``) and the whole-scope legs (``WHOLE_*``) rank by; a test reproduces it bit for bit.

**The bound.** For vectors of dimension ``d < 4000`` whose norms are well inside float32's
range, with ``u = 2^-24`` float32's unit roundoff and ``g = d u / (1 - d u)`` the bound of a
``d``-term dot product's rounding relative to ``sum |x_i q_i| <= |x| |q|``, in any summation
order, with or without FMA: the float32 cosine of the doubles ``x, q`` is within ``2g + 8u``
of their true cosine. Each element's rounding to float32 is ``u`` (a product's ``2u``); the
norms' is ``g/2 + 2u`` after the square root; normalising each element first (``g/2 + 4u``
per element) then the dot product (``g``) gives ``2g + 8u``, dividing the dot product by the
norms instead gives ``2g + 5u``; a truncating conversion would add ``2u``. The score
``(1 + cos) / 2`` halves that and its own rounding adds ``u``, and the double formula is within
``d 2^-52`` of the truth, far below ``u``. So ``|float32 score - exact score| < g + 7u <
(d + 8) u``, and this module uses ``eps = (d + 8) 2^-23``, twice that (``d = 384``:
``4.7e-5``), as the second-order terms are far below the margin.

**Why re-scoring the near-ties is enough.** Rows are sorted by float32 score ``s`` (ties by
id); ``S`` is the ``$k``-th. At least ``$k`` rows have ``s >= S``, so the exact ``$k``-th
score is at least ``S - eps``, and a row with ``s < S - 2 eps`` has an exact score below it:
it can be in no exact top ``$k``, ties included. The candidates are the others, a prefix of
the sorted rows. A candidate whose ``s`` is more than ``2 eps`` from both neighbours'
(isolated) keeps its float32 score: its exact order against every other candidate, exactly
re-scored or not, is the float32 order, strictly. Every other candidate (a near-tie, or within
``2 eps`` of the cut) is re-scored exactly, and the candidates are sorted by the score they
now hold, ties by id: the exact scan's order and cut, and the answer depends on the scope's
rows only, however the float32 scores were summed. Only the re-scored rows' vectors are read
again (typically none to a few of a query's).
"""

from typing import LiteralString

# 2 eps = (d + 8) 2^-22, d the query vector's dimension (see the module's docstring).
BAND: LiteralString = "(size($vector) + 8) * 2.384185791015625E-7"


# The exact score of ``e`` (a row's stored vector) against ``$vector`` (``qq``: the query's
# squared norm), in double precision, each sum left to right.
RESCORED: LiteralString = (
    "(1 + reduce(s = 0.0, j IN range(0, size(e) - 1) | s + e[j] * $vector[j])"
    " / sqrt(reduce(s = 0.0, x IN e | s + x * x) * qq)) / 2"
)


def exact_top(var: LiteralString, ident: LiteralString) -> LiteralString:
    """Cypher that takes ``found`` (rows by float32 score, best first, ties by ``ident``)
    and ``ranked`` (their scores) to the exact top ``$k`` as rows of ``var, score``, best
    first, ties by ``ident``."""
    return (
        "\nWITH found, ranked, "
        + BAND
        + " AS band, reduce(s = 0.0, x IN $vector | s + x * x) AS qq"
        "\nWITH found, ranked, band, qq,"
        " size([s IN ranked WHERE s >= ranked[..$k][-1] - band]) AS m"
        "\nUNWIND range(0, m - 1) AS i"
        "\nWITH qq, found[i] AS " + var + ", ranked[i] AS score,"
        "\n     (i > 0 AND ranked[i - 1] - ranked[i] <= band)"
        " OR (i < m - 1 AND ranked[i] - ranked[i + 1] <= band) AS near"
        "\nWITH qq, " + var + ", score, CASE WHEN near THEN " + var + ".embedding END AS e"
        "\nWITH " + var + ", CASE WHEN e IS NULL THEN score ELSE " + RESCORED + " END AS score"
        "\nORDER BY score DESC, " + ident + "\nLIMIT $k"
    )
