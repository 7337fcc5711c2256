"""The text side of hybrid recall in fewer round trips, and the full-text leg's reads.

``read_text_side`` runs one statement per scope (``READ_TEXT_SIDE``): the query terms'
statistics, and for each kind whose query terms the scope's statistics count on fewer than
``HELD_MAX_ROWS`` rows together, every row of that kind holding a query term, with its cues
(``Held``). The full-text leg (``recall_legs.fulltext_leg``) then answers each of its reads
from those rows (the rows holding a term of a batch, or a whole set of terms, exactly the
rows Lucene would return for the same query, as Lucene's whitespace analyzer matches the
row's stored ``ft`` terms) and reads no cues: its rows, scores, ties and pool are those of
its own reads, so ranking stays exact and scope-local. A kind counted on more rows, or whose
answer was full (the statistics lag), is read by the leg itself, as before.

``Reader`` is the leg's reads: rows matching a Lucene query, whole, and the covering read
that spares most of a frequent rarest term's rows on a big scope.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from palimpsest.cypher import recall_text as q
from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.errors import InvalidArgument

# A kind's rows are read with the statistics when its query terms are counted on fewer rows
# than this together: below it, the round trips spared cost more than the rows read that the
# leg's own reads would skip. At 1,000, a 680-chunk conversation's searches held most of
# their rows and cost more CPU than the legs' own reads (docs/notes/search-latency.md).
HELD_MAX_ROWS = 200
MAX_SPEAKERS = 1000

# Which rows a read asks for, by the terms a row holds (the Lucene query's own meaning).
Holds = Callable[[frozenset[str]], bool]


def any_of(terms: Iterable[str]) -> Holds:
    """``lucene_terms``: rows holding any of ``terms``."""
    wanted = frozenset(terms)
    return lambda held: not wanted.isdisjoint(held)


def sets_of(sets: Sequence[Sequence[str]], unless: Sequence[str] = ()) -> Holds:
    """``lucene_sets``: rows holding every term of one of ``sets``, not every one of ``unless``."""
    wanted = [frozenset(s) for s in sets]
    besides = frozenset(unless)
    return lambda held: any(s <= held for s in wanted) and not (besides and besides <= held)


@dataclass(frozen=True, slots=True)
class Held:
    """Every row of one kind of a scope holding a query term, as the leg's reads return
    them (one record of parallel lists), with each row's cues."""

    found: Row
    terms: tuple[frozenset[str], ...]  # each row's stored terms

    @classmethod
    def of(cls, found: Row) -> Held:
        return cls(found, tuple(frozenset(f.split(" ")) if f else frozenset() for f in found["ft"]))

    def where(self, holds: Holds) -> Row:
        keep = [i for i, terms in enumerate(self.terms) if holds(terms)]
        return {name: [values[i] for i in keep] for name, values in self.found.items()}

    def cues(self) -> dict[str, Sequence[Any]]:
        return dict(zip(self.found["ids"], self.found["cues"], strict=True))


@dataclass(frozen=True, slots=True)
class TextSide:
    """One scope's statistics per kind, the speakers it knows, and the rows held per kind."""

    kinds: dict[str, KindStats]
    speakers: list[str]
    held: dict[str, Held] = field(default_factory=dict)


def stats_params(kinds: Sequence[str], terms: Sequence[str], speakers: bool) -> dict[str, Any]:
    return {
        "kinds": list(kinds),
        "terms": [fulltext.TOTALS, *terms],
        "speakers": speakers,
        "speaker_kind": fulltext.SPEAKER_KIND,
        "limit": MAX_SPEAKERS,
    }


def parse_stats(
    rows: Iterable[Row], kinds: Sequence[str]
) -> tuple[dict[str, KindStats], list[str]]:
    """The statistics rows of ``READ_TERM_STATS`` (or ``READ_TEXT_SIDE``'s ``stats``)."""
    totals: dict[str, tuple[int, int]] = {}
    dfs: dict[str, dict[str, int]] = {k: {} for k in kinds}
    peaks: dict[str, dict[str, tuple[int, float]]] = {k: {} for k in kinds}
    names: list[str] = []
    for r in rows:
        if r["kind"] == fulltext.SPEAKER_KIND:
            names.append(r["term"])
        elif r["term"] == fulltext.TOTALS:
            totals[r["kind"]] = (int(r["df"]), int(r["len"]))
        elif int(r["df"]) > 0:
            dfs[r["kind"]][r["term"]] = int(r["df"])
            if r["bounded"]:
                peaks[r["kind"]][r["term"]] = (int(r["max_tf"]), float(r["max_ratio"]))
    stats = {k: KindStats(*totals.get(k, (0, 0)), dfs[k], peaks[k]) for k in kinds}
    return stats, names


async def read_text_side(
    tx: ScopedTx,
    kinds: Sequence[str],
    terms: Sequence[str],
    speakers: bool,
    base: Mapping[str, Any],
    held: Sequence[str],
    most: int = HELD_MAX_ROWS,
) -> TextSide:
    """The statistics, and the rows of each kind of ``held`` that are few (one statement)."""
    params = {
        **base,
        **stats_params(kinds, terms, speakers),
        **{f"hold_{k}": k in held for k in fulltext.KINDS},
        **{f"kind_{k}": k for k in fulltext.KINDS},
        "lucene": fulltext.lucene_terms(tx.ref.scope_key, sorted(set(terms))),
        "k": most,
    }
    [row] = await tx.run(q.READ_TEXT_SIDE, params)
    stats, names = parse_stats(row["stats"], kinds)
    found = {k: row[k] for k in held if row[k] is not None and len(row[k]["ids"]) < most}
    return TextSide(stats, names, {k: Held.of(f) for k, f in found.items()})


# What the procedure takes as a term (``fulltext.analyze``'s output, as ``fulltext._check``).
_TERM = re.compile(r"[^\W_]+")
# The procedure engine first asks for twice the pool, or the pool and this many more rows if
# that is more, so a few rows the filters drop do not cost a second call.
TOP_SPARE = 16


def check_terms(terms: Sequence[str]) -> None:
    """Refuse, coded, terms the procedure cannot take (none, or not analyzed words)."""
    if not terms or not all(_TERM.fullmatch(t) for t in terms):
        raise InvalidArgument("full-text terms must be analyzed words")


def first_top(pool: int) -> int:
    """How many rows a procedure read asks for first: twice the pool, or ``TOP_SPARE`` more."""
    return pool + max(pool, TOP_SPARE)


@dataclass(frozen=True, slots=True)
class Procedure:
    """A leg's reads on the procedure engine (``cypher/recall_procedure.py``): the extension
    scores the rows it matches with this scorer's parts and returns the best ``top``."""

    statement: Statement
    kind: str
    scorer: fulltext.Scorer
    pool: int

    def params(
        self, sets: Sequence[Sequence[str]], unless: Sequence[str], top: int
    ) -> dict[str, Any]:
        """The call's parameters; input the procedure cannot use is refused here, coded,
        before any call (the procedure checks again, for any other caller)."""
        terms = [needle.strip(" ") for needle, _ in self.scorer.terms]
        groups = [*sets, *([unless] if unless else []), *([terms] if terms else [])]
        if not sets:
            raise InvalidArgument("full-text terms must be analyzed words")
        for group in groups:
            check_terms(group)
        if top < 1 or not self.scorer.avg_length > 0.0:
            raise InvalidArgument("a full-text read needs a positive size and average length")
        return {
            "kind": self.kind,
            "sets": [list(s) for s in sets],
            "unless": list(unless),
            "terms": terms,
            "weights": [weight for _, weight in self.scorer.terms],
            "k1": self.scorer.k1,
            "b": self.scorer.b,
            "avg_length": self.scorer.avg_length,
            "top": top,
        }


def complete(found: Row, pool: int, top: int) -> bool:
    """Whether a procedure answer cut at ``top`` rows holds every row that matters: all the
    rows matched, or ``pool`` live rows whose last scores above the last row returned (every
    row left out scores at most that, so below the pool's floor: neither in the pool nor
    among the rows the filters dropped from it)."""
    scores = found["scores"]
    if len(scores) < top:
        return True
    live = [score for score, alive in zip(scores, found["live"], strict=True) if alive]
    return len(live) >= pool and live[pool - 1] > scores[-1]


@dataclass(frozen=True, slots=True)
class Reader:
    """The reads of one full-text leg: from Neo4j (by the Cypher statement, or by the
    extension's procedure when given), or from the rows ``held`` when given."""

    tx: ScopedTx
    statement: Statement
    stats: KindStats
    base: dict[str, Any]
    take: Callable[[Row], None]
    held: Held | None = None
    procedure: Procedure | None = None

    async def covering(
        self,
        terms: Sequence[str],
        pool: int,
        k1: float,
        b: float,
        scored: dict[str, tuple[float, bool]],
        min_rows: int,
    ) -> bool:
        """Read every row that could enter the pool in two small reads, when that can be
        (False: it could not; the rows read so far are scored all the same). The rows holding
        every term of the seed (``_seed``: the query's terms, or its rarest ones) are read
        first and scored exactly: the pool's last live score among them is one the true pool
        reaches, so a row that could still enter holds a whole set of terms whose bounds
        reach it (``fulltext.covering_sets``), and exactly those rows are read next, less the
        seed's. Rows, scores and ranks still depend only on the scope. Used when the rarest
        term is held by ``min_rows`` rows or more (below that, reading them costs less than a
        round trip)."""
        df = self.stats.df
        present = sorted({t for t in terms if df.get(t, 0) > 0})
        if not 2 <= len(present) <= fulltext.MAX_COVER_TERMS:
            return False  # one term: its rows are the read; many: too many sets to ask for
        if min(df[t] for t in present) < min_rows:
            return False
        seed = _seed(present, self.stats, pool)
        if seed is None:
            return False  # too few rows are likely to hold even the two rarest terms
        key = self.tx.ref.scope_key
        lucene = fulltext.lucene_sets(key, [seed])
        self.take(await self.rows(lucene, _most_of([seed], df), sets_of([seed]), [seed]))
        threshold = best_score(scored, pool)
        sets = (
            None
            if threshold is None
            else fulltext.covering_sets(present, self.stats, k1, b, threshold)
        )
        if not sets:
            return False
        if all(set(seed) <= set(s) for s in sets):
            return True  # only rows holding the seed's terms can enter: all of them are read
        first = most_holding(fulltext.first_terms(terms, self.stats, pool), self.stats)
        if _expected(sets, self.stats) >= first:
            return False  # reading the rarest terms' rows first would read no more
        lucene = fulltext.lucene_sets(key, sets, seed)
        self.take(await self.rows(lucene, _most_of(sets, df), sets_of(sets, seed), sets, seed))
        return True

    async def rows(
        self,
        lucene: str,
        most: int,
        holds: Holds,
        sets: Sequence[Sequence[str]],
        unless: Sequence[str] = (),
    ) -> Row:
        """Every row of the scope matching ``lucene`` (the rows ``holds`` keeps; the rows
        holding every term of one of ``sets`` and not every one of ``unless``), as one record
        of parallel lists. The limit is the scope's own count of such rows at most
        (``most``), plus one; a full answer means the statistics lag, so ask again with more
        until the answer is complete: the cut-off never falls inside the scope. On the
        procedure engine, only the best rows, scored (``complete``)."""
        if self.held is not None:
            return self.held.where(holds)
        if self.procedure is not None:
            return await self._best(self.procedure, sets, unless)
        k = most + 1
        while True:
            [found] = await self.tx.run(self.statement, {**self.base, "lucene": lucene, "k": k})
            if len(found["ids"]) < k:
                return found
            k *= 4

    async def _best(
        self, procedure: Procedure, sets: Sequence[Sequence[str]], unless: Sequence[str]
    ) -> Row:
        top = first_top(procedure.pool)
        while True:
            params = {**self.base, **procedure.params(sets, unless, top)}
            [found] = await self.tx.run(procedure.statement, params)
            if complete(found, procedure.pool, top):
                return found
            top *= 4


def _seed(present: Sequence[str], stats: KindStats, pool: int) -> list[str] | None:
    """The terms whose rows are read first: all of them, or as many of the rarest (which
    score the most) as a pool's worth of rows likely holds together; None below two."""
    seed = sorted(present, key=lambda t: (stats.df[t], t))
    while len(seed) >= 2:
        if _expected([seed], stats) >= pool:
            return sorted(seed)
        seed.pop()  # the most frequent term: the one that adds least to a score
    return None


def most_holding(batch: Sequence[str], stats: KindStats) -> int:
    """The scope's own count of rows holding a term of ``batch``, at most."""
    return sum(stats.df.get(t, 0) for t in batch)


def _expected(sets: Sequence[Sequence[str]], stats: KindStats) -> float:
    """About how many rows of the scope hold a whole set of ``sets``, were terms independent
    (only to choose the cheaper read; the pool is exact either way)."""
    n = max(stats.rows, 1)
    return sum(n * math.prod(stats.df.get(t, 0) / n for t in s) for s in sets)


def _most_of(sets: Sequence[Sequence[str]], df: Mapping[str, int]) -> int:
    """The scope's own count of rows holding a whole set of ``sets``, at most."""
    return sum(min(df.get(t, 0) for t in s) for s in sets)


def best_score(scored: dict[str, tuple[float, bool]], pool: int) -> float | None:
    """The pool's last live score so far (None while fewer live rows were read)."""
    best = heapq.nlargest(pool, (s for s, alive in scored.values() if alive))
    return best[-1] if len(best) == pool else None
