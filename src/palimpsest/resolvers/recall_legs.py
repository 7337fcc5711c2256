"""The legs of hybrid recall for one scope and one kind of row, and the final load.

Each function takes the handle it runs on, so legs can share one transaction or run in
their own, concurrently (the planner in ``recall.py`` decides).

- ``read_stats``: the scope's own term statistics for the query terms (counts and peaks),
  its row count per kind, and the speakers it knows (one statement).
- ``vector_leg``: scopes up to ``exact_max_rows`` rows are ranked exactly: the vector index is
  asked for the whole scope (``WHOLE_*``, ``cypher/recall_whole.py``: exact only when it
  answered every embedded row of the scope, checked in the statement), else scanned
  (``EXACT_*``); larger ones use the in-index filtered ANN search, re-run exactly when it
  reads short, and over-fetch when row filters thin the pool.
- ``fulltext_leg``: exact scope-local BM25 top-``pool`` by MaxScore. Rows holding the rarest
  terms are enumerated first (every such row of the scope: the Lucene limit is the scope's
  own count of them) and scored; then the terms whose rows could still reach the pool are
  enumerated too; a row holding only the remaining terms scores below the pool's last score,
  so it cannot enter. On a big scope, where the rarest term alone is held by hundreds of
  rows or more, the covering read (``_Reader.covering``) first reads the rows holding every
  query term, then only the rows holding a set of terms that could still reach the pool.
  A term's bound comes from the scope's peaks for it (``fulltext.upper_bound``). Which rows
  are read, and their scores, depend only on the scope. The pool's cues are read once the
  pool is known.
- ``load_hits``: the rows fusion kept, every kind of a scope in one statement.

Legs return their pool's ``Cues`` (observedAt, years, time expressions, speaker,
validity), so the time window and the boosts need no load: only the top-k is loaded.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from palimpsest import fulltext, timerefs
from palimpsest.cypher import recall as q
from palimpsest.cypher import recall_whole as wq
from palimpsest.cypher import terms as tq
from palimpsest.cypher.executor import Row, ScopedTx, Statement
from palimpsest.fulltext import KindStats
from palimpsest.recall import Source

MAX_FETCH = 2000
# The approximate search is asked for at least this many rows, whatever the pool: a larger
# LIMIT widens its search, so the top of a small pool is closer to an exact scan's
# (the default of ``recall_ann_floor``).
ANN_FLOOR = 50
MAX_SPEAKERS = 1000
# A full-text leg tries the covering read when its rarest term is held by this many rows of
# the scope or more (``_Reader.covering``).
COVER_MIN_ROWS = 200
KIND = {Source.NOTES: "memory", Source.DOCUMENTS: "chunk", Source.FACTS: "fact"}


@dataclass(frozen=True, slots=True)
class KindLegs:
    ann: Statement
    exact: Statement
    terms: Statement
    cues: Statement


LEGS: dict[Source, KindLegs] = {
    Source.NOTES: KindLegs(q.VECTOR_MEMORY, q.EXACT_MEMORY, q.TERMS_MEMORY, q.CUES_MEMORY),
    Source.DOCUMENTS: KindLegs(q.VECTOR_CHUNKS, q.EXACT_CHUNKS, q.TERMS_CHUNKS, q.CUES_CHUNKS),
    Source.FACTS: KindLegs(q.VECTOR_FACTS, q.EXACT_FACTS, q.TERMS_FACTS, q.CUES_FACTS),
}


# The whole scope from the vector index: what a small scope's exact leg tries first.
WHOLE: dict[Source, Statement] = {
    Source.NOTES: wq.WHOLE_MEMORY,
    Source.DOCUMENTS: wq.WHOLE_CHUNKS,
    Source.FACTS: wq.WHOLE_FACTS,
}


@dataclass(frozen=True, slots=True)
class Cues:
    """What the time window and the boosts read of a candidate, before any full load."""

    observed_at: datetime | None
    years: list[int] | None
    has_time: bool
    speaker: str | None
    dated: bool  # has a validity interval (facts and notes)
    ranges: tuple[timerefs.Range, ...] = ()  # time expressions resolved at ingest (chunks)

    @classmethod
    def of(cls, raw: Sequence[Any] | None) -> Cues:
        """From a leg's cue list; rows read by statements without the ranges (or written
        before they were kept) have none."""
        if not raw:
            return cls(None, None, False, None, False)
        ms, years, has_time, speaker, dated = raw[:5]
        observed = None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)
        ranges = timerefs.stored(raw[5], raw[6]) if len(raw) >= 7 else ()
        return cls(observed, years, bool(has_time), speaker, bool(dated), ranges)


@dataclass(frozen=True, slots=True)
class ScopeStats:
    kinds: dict[str, KindStats]
    speakers: list[str] = field(default_factory=list)

    def of(self, source: Source) -> KindStats:
        return self.kinds.get(KIND[source], KindStats(0, 0, {}))


@dataclass(frozen=True, slots=True)
class Ranked:
    """A leg's answer: live row ids best first with their raw scores (cosine or BM25), and
    the ids of rows the row filters dropped from the pool."""

    ids: list[str]
    scores: dict[str, float]
    dropped: set[str]
    cues: dict[str, Cues] = field(default_factory=dict)
    # What a hit shows of each kept row (``q.NOTE_HIT``/``q.CHUNK_HIT``), when the leg read it.
    rows: dict[str, Row] = field(default_factory=dict)


async def read_stats(
    tx: ScopedTx, sources: Sequence[Source], terms: Sequence[str], speakers: bool
) -> ScopeStats:
    kinds = [KIND[s] for s in sources]
    params = {
        "kinds": kinds,
        "terms": [fulltext.TOTALS, *terms],
        "speakers": speakers,
        "speaker_kind": fulltext.SPEAKER_KIND,
        "limit": MAX_SPEAKERS,
    }
    totals: dict[str, tuple[int, int]] = {}
    dfs: dict[str, dict[str, int]] = {k: {} for k in kinds}
    peaks: dict[str, dict[str, tuple[int, float]]] = {k: {} for k in kinds}
    names: list[str] = []
    for r in await tx.run(tq.READ_TERM_STATS, params):
        if r["kind"] == fulltext.SPEAKER_KIND:
            names.append(r["term"])
        elif r["term"] == fulltext.TOTALS:
            totals[r["kind"]] = (int(r["df"]), int(r["len"]))
        elif int(r["df"]) > 0:
            dfs[r["kind"]][r["term"]] = int(r["df"])
            if r["bounded"]:
                peaks[r["kind"]][r["term"]] = (int(r["max_tf"]), float(r["max_ratio"]))
    stats = {k: KindStats(*totals.get(k, (0, 0)), dfs[k], peaks[k]) for k in kinds}
    return ScopeStats(stats, names)


async def vector_leg(
    tx: ScopedTx,
    source: Source,
    vector: list[float],
    pool: int,
    base: dict[str, Any],
    rows_in_scope: int,
    exact_max_rows: int,
    ann_floor: int = ANN_FLOOR,
) -> Ranked:
    legs, whole = LEGS[source], WHOLE[source]
    statement = whole if rows_in_scope <= exact_max_rows else legs.ann
    params = {**base, "vector": vector}
    k = pool
    while True:
        ask = max(k, ann_floor) if statement is legs.ann else k
        asked = {**params, "k": ask}
        if statement is whole:  # the whole scope, with room for rows written since the stats
            asked["n"] = max(ask, rows_in_scope + rows_in_scope // 8 + 16)
        rows = _columns(await tx.run(statement, asked))
        if statement is whole and not rows:
            statement = legs.exact  # the index did not answer every row of the scope
            continue
        live = [r for r in rows if r["live"]]
        if len(live) >= pool or k >= MAX_FETCH:
            break
        if len(rows) < ask:
            if statement is not legs.ann:
                break
            statement = legs.exact  # fewer rows than asked: small scope or a short ANN read
            continue
        k = min(k * 4, MAX_FETCH)  # filters thinned a full page: over-fetch
    kept = live[:pool]
    cosine = {r["id"]: 2.0 * float(r["score"]) - 1.0 for r in kept}
    cues = {r["id"]: Cues.of(r.get("cues")) for r in kept}
    return Ranked(
        [r["id"] for r in kept],
        cosine,
        {r["id"] for r in rows if _dropped(r["live"], r.get("untimely", True))},
        cues,
        {r["id"]: r["row"] for r in kept if "row" in r},
    )


async def past_chunks_leg(
    tx: ScopedTx, vector: list[float], pool: int, base: dict[str, Any]
) -> Ranked:
    """A ``known_at`` read's closed chunk versions that were current then, by exact cosine
    (they are in no index); the current ones known then come from the usual legs."""
    rows = _columns(await tx.run(q.EXACT_CHUNK_VERSIONS, {**base, "vector": vector, "k": pool}))
    return Ranked(
        [r["id"] for r in rows],
        {r["id"]: 2.0 * float(r["score"]) - 1.0 for r in rows},
        set(),
        {r["id"]: Cues.of(r.get("cues")) for r in rows},
    )


async def fulltext_leg(
    tx: ScopedTx,
    source: Source,
    terms: Sequence[str],
    stats: KindStats,
    pool: int,
    base: dict[str, Any],
    k1: float,
    b: float,
    cover_min_rows: int = COVER_MIN_ROWS,
) -> Ranked:
    """Exact top-``pool`` live rows by scope-local BM25 (ties by id)."""
    statement = LEGS[source].terms
    scorer = fulltext.Scorer.of(terms, stats, k1, b)
    scored: dict[str, tuple[float, bool]] = {}
    filtered_out: set[str] = set()  # not live, but not for the time view (expiry, prefix)

    def take(found: Row) -> None:
        # The record's parallel lists, read as they are: no dictionary per row.
        ids = found["ids"]
        untimely = found.get("untimely", [True] * len(ids))
        rows = zip(
            ids, found["lens"], found["live"], found["ft"], found["tf"], untimely, strict=True
        )
        for row_id, length, live, ft, tf, late in rows:
            if row_id not in scored:
                scored[row_id] = (scorer.score(ft, tf, int(length)), bool(live))
                if not _dropped(live, late):
                    filtered_out.add(row_id)

    reader = _Reader(tx, statement, stats, base, take)
    if not await reader.covering(terms, pool, k1, b, scored, cover_min_rows):
        done: set[str] = set()
        batch = fulltext.first_terms(terms, stats, pool)
        while batch:
            lucene = fulltext.lucene_terms(tx.ref.scope_key, batch)
            take(await reader.rows(lucene, _most_holding(batch, stats)))
            done |= set(batch)
            batch = fulltext.missing_terms(terms, done, stats, k1, b, _threshold(scored, pool))
    # The pool, best first (ties by id), without sorting every row read (tens of thousands on
    # a big scope).
    live = heapq.nsmallest(
        pool, (i for i, (_, alive) in scored.items() if alive), key=lambda i: (-scored[i][0], i)
    )
    floor = scored[live[-1]][0] if len(live) == pool else float("-inf")
    dropped = {
        i
        for i, (score, alive) in scored.items()
        if not alive and score >= floor and i not in filtered_out
    }
    cues, shown = await _cues(tx, source, live)
    return Ranked(live, {i: scored[i][0] for i in live}, dropped, cues, shown)


@dataclass(frozen=True, slots=True)
class _Reader:
    """The reads of one full-text leg: rows matching a Lucene query, whole, and the covering
    read that spares most of a frequent rarest term's rows on a big scope."""

    tx: ScopedTx
    statement: Statement
    stats: KindStats
    base: dict[str, Any]
    take: Callable[[Row], None]

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
        self.take(await self.rows(fulltext.lucene_sets(key, [seed]), _most_of([seed], df)))
        threshold = _threshold(scored, pool)
        sets = (
            None
            if threshold is None
            else fulltext.covering_sets(present, self.stats, k1, b, threshold)
        )
        if not sets:
            return False
        if all(set(seed) <= set(s) for s in sets):
            return True  # only rows holding the seed's terms can enter: all of them are read
        first = _most_holding(fulltext.first_terms(terms, self.stats, pool), self.stats)
        if _expected(sets, self.stats) >= first:
            return False  # reading the rarest terms' rows first would read no more
        self.take(await self.rows(fulltext.lucene_sets(key, sets, seed), _most_of(sets, df)))
        return True

    async def rows(self, lucene: str, most: int) -> Row:
        """Every row of the scope matching ``lucene``, as one record of parallel lists. The
        limit is the scope's own count of such rows at most (``most``), plus one; a full
        answer means the statistics lag, so ask again with more until the answer is
        complete: the cut-off never falls inside the scope."""
        k = most + 1
        while True:
            [found] = await self.tx.run(self.statement, {**self.base, "lucene": lucene, "k": k})
            if len(found["ids"]) < k:
                return found
            k *= 4


def _seed(present: Sequence[str], stats: KindStats, pool: int) -> list[str] | None:
    """The terms whose rows are read first: all of them, or as many of the rarest (which
    score the most) as a pool's worth of rows likely holds together; None below two."""
    seed = sorted(present, key=lambda t: (stats.df[t], t))
    while len(seed) >= 2:
        if _expected([seed], stats) >= pool:
            return sorted(seed)
        seed.pop()  # the most frequent term: the one that adds least to a score
    return None


def _most_holding(batch: Sequence[str], stats: KindStats) -> int:
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


async def _cues(
    tx: ScopedTx, source: Source, ids: list[str]
) -> tuple[dict[str, Cues], dict[str, Row]]:
    """The cues of the rows a full-text leg kept, and what a hit shows of them when the
    statement reads it (read in the leg's transaction)."""
    if not ids:
        return {}, {}
    found = {r["id"]: r for r in _columns(await tx.run(LEGS[source].cues, {"ids": ids}))}
    cues = {i: Cues.of(found[i]["cues"] if i in found else None) for i in ids}
    return cues, {i: r["row"] for i, r in found.items() if "row" in r}


def _dropped(live: bool, untimely: bool) -> bool:
    """Dropped by the time view: not live, and (notes) not live for their validity alone."""
    return not live and bool(untimely)


def _threshold(scored: dict[str, tuple[float, bool]], pool: int) -> float | None:
    """The pool's last live score so far (None while fewer live rows were read)."""
    best = heapq.nlargest(pool, (s for s, alive in scored.values() if alive))
    return best[-1] if len(best) == pool else None


def _columns(rows: list[Row]) -> list[Row]:
    """A leg's single record of parallel lists (``ids`` first), as one dict per row."""
    if not rows:
        return []
    [record] = rows
    names = [_SINGULAR.get(name, name) for name in record]
    return [dict(zip(names, values, strict=True)) for values in zip(*record.values(), strict=True)]


_SINGULAR = {"ids": "id", "scores": "score", "lens": "len", "cues": "cues", "rows": "row"}


async def load_hits(
    tx: ScopedTx, ids: Mapping[Source, Sequence[str]], known_at: datetime | None = None
) -> dict[Source, list[Row]]:
    """The rows of one scope fusion kept, every kind in one statement; a row deleted since
    its leg read it is simply missing. With ``known_at``, chunks as they were then."""
    params = {
        "known_at": known_at,
        "notes": list(ids.get(Source.NOTES, ())),
        "chunks": list(ids.get(Source.DOCUMENTS, ())),
        "facts": list(ids.get(Source.FACTS, ())),
    }
    [row] = await tx.run(q.LOAD_HITS, params)
    return {
        Source.NOTES: row["notes"],
        Source.DOCUMENTS: row["chunks"],
        Source.FACTS: row["facts"],
    }
