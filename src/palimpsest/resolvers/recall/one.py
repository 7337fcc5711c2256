"""A search of one scope in one round trip, on the procedure engine (issue 43 item 2).

``read`` sends ``recall_one.SEARCH_ONE``: the statistics, every kind's full-text leg through
the extension and every kind's vector leg's first read, in one statement. The question is
embedded before it is sent, with the speakers the scope had at its last search in this
process (``Hints``; none the first time): the statement reads the scope's speakers, and
where they strip the question to another text than the one embedded, the vector legs are
read again with the right vector (``Answer.vector_ok``). Nothing is guessed into a result:

- A full-text leg answered by the statement was scored by the procedure with idf weights
  computed in Cypher (Java's ``log``, which may differ from Python's in the last bit). Its
  rows are scored again here with ``fulltext.Scorer`` (the Cypher leg's floats) and used
  only when no row left out can reach the pool (``text_leg``: every matched row came back,
  or the pool's last live score is above the last row's procedure score with a margin far
  wider than a few ulps); else, and where the statement did not read the kind (its query
  terms held by more than ``ONE_MAX_ROWS`` rows), the leg reads as before.
- A vector leg uses the statement's answer as its first read (``legs.vector_leg(first=)``)
  and goes on as before when that read is short or thinned by the filters.

The rows and what a hit shows of them come with the legs (notes, chunks), so the final load
reads only the facts among the hits.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from palimpsest.cypher import recall_one as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fusion import Source
from palimpsest.resolvers.recall import legs, text

# A kind's full-text leg runs inside the one statement when its query terms are held by at
# most this many rows of the scope together (the procedure reads them all and returns the
# best): above it, the planned reads (MaxScore, the covering read) read fewer rows.
ONE_MAX_ROWS = 10_000
# How far a procedure score may be from the resolver's own for the same row, relatively:
# the two differ only through the idf's ``log`` (an ulp or so), far below this.
MARGIN = 1e-9
# Off only to measure what the one statement saves (a bench's A/B), as the executor's
# ``PIPELINE_BEGIN``.
ENABLED = True
# Scopes whose last speakers and row counts are kept (least recently searched dropped).
HINTS_MAX = 4096


@dataclass(frozen=True, slots=True)
class Hint:
    """What a scope's last search read: its speakers and its largest kind's row count."""

    speakers: frozenset[str]
    rows: int


class Hints:
    """The last ``Hint`` of each scope searched in this process; only ever a first guess."""

    def __init__(self, most: int = HINTS_MAX) -> None:
        self._most = most
        self._seen: OrderedDict[str, Hint] = OrderedDict()

    def get(self, scope_key: str) -> Hint | None:
        hint = self._seen.get(scope_key)
        if hint is not None:
            self._seen.move_to_end(scope_key)
        return hint

    def put(self, scope_key: str, hint: Hint) -> None:
        self._seen[scope_key] = hint
        self._seen.move_to_end(scope_key)
        while len(self._seen) > self._most:
            self._seen.popitem(last=False)


HINTS = Hints()


@dataclass(frozen=True, slots=True)
class Answer:
    """One scope's statistics, and what the statement read per kind: the full-text rows
    (procedure-scored) and the vector leg's first read."""

    stats: legs.ScopeStats
    text: dict[Source, Row]
    vector: dict[Source, Row]


def whole_rows(hint: Hint | None, pool: int, exact_max_rows: int) -> int:
    """How many rows a whole-scope vector read asks for: as ``legs.vector_leg`` would for the
    rows last seen, or for the most a whole-scope read serves when none were. Asked for too
    few, the read answers nothing and the leg scans exactly: the same rows either way."""
    rows = exact_max_rows if hint is None else min(hint.rows, exact_max_rows)
    return max(pool, rows + rows // 8 + 16)


async def read(
    tx: ScopedTx,
    sources: Sequence[Source],
    terms: Sequence[str],
    speakers: bool,
    base: dict[str, Any],
    vector: list[float] | None,
    pool: int,
    k1: float,
    b: float,
    exact_max_rows: int,
    ann_floor: int,
) -> Answer:
    """The one statement for one scope (``vector`` None: no vector leg)."""
    kinds = [legs.KIND[s] for s in sources]
    known = sorted(set(terms))
    if known:
        text.check_terms(known)
    params: dict[str, Any] = {
        **base,
        **text.stats_params(kinds, terms, speakers),
        **{f"kind_{k}": k for k in fulltext.KINDS},
        **{f"text_{k}": bool(known) and k in kinds for k in fulltext.KINDS},
        **{f"vector_{k}": vector is not None and k in kinds for k in fulltext.KINDS},
        "text_terms": known,
        "one_max_rows": ONE_MAX_ROWS,
        "top": text.first_top(pool),
        "k1": k1,
        "b": b,
        "vector": vector or [],
        "k": pool,
        "n": whole_rows(HINTS.get(tx.ref.scope_key), pool, exact_max_rows),
        "ann_k": max(pool, ann_floor),
        "exact_max": exact_max_rows,
    }
    [row] = await tx.run(q.SEARCH_ONE, params)
    kinds_stats, names = text.parse_stats(row["stats"], kinds)
    stats = legs.ScopeStats(kinds_stats, names)
    HINTS.put(
        tx.ref.scope_key,
        Hint(frozenset(names), max((k.rows for k in kinds_stats.values()), default=0)),
    )
    by_text = {s: row[f"text_{legs.KIND[s]}"] for s in sources}
    by_vector = {s: row[f"whole_{legs.KIND[s]}"] or row[f"ann_{legs.KIND[s]}"] for s in sources}
    return Answer(
        stats,
        {s: found for s, found in by_text.items() if found is not None},
        {s: found for s, found in by_vector.items() if found is not None},
    )


def text_leg(
    found: Row, terms: Sequence[str], stats: fulltext.KindStats, pool: int, k1: float, b: float
) -> legs.Ranked | None:
    """The kind's full-text leg from the statement's rows, scored again by the resolver; None
    when a row left out could still reach the pool (the leg then reads as before)."""
    scorer = fulltext.Scorer.of(terms, stats, k1, b)
    ids = found["ids"]
    untimely = found.get("untimely") or [True] * len(ids)
    scored: dict[str, tuple[float, bool]] = {}
    filtered_out: set[str] = set()
    rows = zip(ids, found["lens"], found["live"], found["ft"], found["tf"], untimely, strict=True)
    for row_id, length, live, ft, tf, late in rows:
        scored[row_id] = (scorer.score(ft, tf, int(length)), bool(live))
        if live or not late:  # not dropped by the time view (``legs.fulltext_leg``)
            filtered_out.add(row_id)
    if not _all_back(found) and not _reaches(found, scored, pool):
        return None
    live_ids, dropped = legs.text_pool(scored, filtered_out, pool)
    cues = dict(zip(ids, found["cues"], strict=True))
    shown = dict(zip(ids, found["rows"], strict=True)) if "rows" in found else {}
    return legs.Ranked(
        live_ids,
        {i: scored[i][0] for i in live_ids},
        dropped,
        {i: legs.Cues.of(cues.get(i)) for i in live_ids},
        {i: shown[i] for i in live_ids if i in shown},
    )


def _all_back(found: Row) -> bool:
    """Whether every row of the scope the terms matched came back (``matched`` counts them;
    null when none matched)."""
    matched = found.get("matched")
    return matched is None or len(found["ids"]) >= int(matched)


def _reaches(found: Row, scored: dict[str, tuple[float, bool]], pool: int) -> bool:
    """Whether the rows returned hold the pool: ``pool`` live rows whose last score is above
    every score a row left out can have (at most the last returned row's procedure score,
    give or take the margin)."""
    best = text.best_score(scored, pool)
    if best is None:
        return False
    last = min(float(s) for s in found["scores"])
    return best > last + abs(last) * MARGIN
