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
  so it cannot enter (the first read also takes the next rarest terms while their rows are
  few, ``SPARE_ROWS``: MaxScore mostly asks for them next). On a big scope, where the rarest
  term alone is held by hundreds of rows or more, the covering read
  (``recall_text.Reader.covering``) first reads the rows holding every query term, then only
  the rows holding a set of terms that could still reach the pool.
  A term's bound comes from the scope's peaks for it (``fulltext.upper_bound``). Which rows
  are read, and their scores, depend only on the scope. The pool's cues are read once the
  pool is known. Where the text side read a kind's few rows with the statistics
  (``recall_text.read_text_side``), the leg's reads are answered from them.
- ``load_hits``: the rows fusion kept, every kind of a scope in one statement.

Legs return their pool's ``Cues`` (observedAt, years, time expressions, speaker,
validity), so the time window and the boosts need no load: only the top-k is loaded.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from palimpsest.cypher import passages as pq
from palimpsest.cypher import recall as q
from palimpsest.cypher import recall_procedure as qp
from palimpsest.cypher import recall_text as qt
from palimpsest.cypher import recall_whole as wq
from palimpsest.cypher import terms as tq
from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.cypher.extension import Engine
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.domain.ranking.fusion import Source
from palimpsest.domain.time import timerefs
from palimpsest.resolvers.recall import text

MAX_FETCH = 2000
# The approximate search is asked for at least this many rows, whatever the pool: a larger
# LIMIT widens its search, so the top of a small pool is closer to an exact scan's
# (the default of ``recall_ann_floor``).
ANN_FLOOR = 100
MAX_SPEAKERS = text.MAX_SPEAKERS
# A full-text leg tries the covering read when its rarest term is held by this many rows of
# the scope or more (``recall_text.Reader.covering``).
COVER_MIN_ROWS = 200
# The first read of a full-text leg also takes the next rarest terms while their rows stay
# within this many in all (``fulltext.first_terms``): one round trip instead of two.
SPARE_ROWS = 200
KIND = {Source.NOTES: "memory", Source.DOCUMENTS: "chunk", Source.FACTS: "fact"}
# The full-text legs' statements on the procedure engine (``cypher/extension.py``).
PROCEDURE_TERMS: dict[Source, Statement] = {
    Source.NOTES: qp.PROC_TERMS_MEMORY,
    Source.DOCUMENTS: qp.PROC_TERMS_CHUNKS,
    Source.FACTS: qp.PROC_TERMS_FACTS,
}


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
class Passage:
    """The passage of a long chunk whose vector scored it (``cypher/passages.py``): its place
    among the chunk's passages (1 is the first after the head) and its character offsets."""

    seq: int
    start: int
    end: int


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
    # The passage that gave a long chunk its vector score, when not its head (chunks only).
    passages: dict[str, Passage] = field(default_factory=dict)


async def read_stats(
    tx: ScopedTx, sources: Sequence[Source], terms: Sequence[str], speakers: bool
) -> ScopeStats:
    kinds = [KIND[s] for s in sources]
    rows = await tx.run(tq.READ_TERM_STATS, text.stats_params(kinds, terms, speakers))
    return ScopeStats(*text.parse_stats(rows, kinds))


async def read_text_side(
    tx: ScopedTx,
    sources: Sequence[Source],
    terms: Sequence[str],
    speakers: bool,
    base: Mapping[str, Any],
    held: Sequence[Source],
) -> tuple[ScopeStats, dict[Source, text.Held]]:
    """The statistics, and the few rows of each kind of ``held`` that hold a query term
    (``recall_text``), in one statement; without terms or such kinds, the statistics alone."""
    if not terms or not held or text.HELD_MAX_ROWS <= 0:
        return await read_stats(tx, sources, terms, speakers), {}
    kinds = [KIND[s] for s in sources]
    side = await text.read_text_side(
        tx, kinds, terms, speakers, base, [KIND[s] for s in held], text.HELD_MAX_ROWS
    )
    rows = {s: side.held[KIND[s]] for s in held if KIND[s] in side.held}
    return ScopeStats(side.kinds, side.speakers), rows


async def held_hits(tx: ScopedTx, ranked: Mapping[Source, Ranked]) -> dict[Source, Ranked]:
    """The pools of held legs (``read_text_side``) with what a hit shows of their notes and
    chunks (``Ranked.rows``, as the cue reads return it), both kinds in one statement."""
    notes, chunks = ranked.get(Source.NOTES), ranked.get(Source.DOCUMENTS)
    params = {"notes": notes.ids if notes else [], "chunks": chunks.ids if chunks else []}
    if not params["notes"] and not params["chunks"]:
        return dict(ranked)
    [row] = await tx.run(qt.HELD_HITS, params)
    shown = {
        Source.NOTES: dict(zip(row["note_ids"], row["notes"], strict=True)),
        Source.DOCUMENTS: dict(zip(row["chunk_ids"], row["chunks"], strict=True)),
    }
    return {s: replace(r, rows=shown[s]) if s in shown else r for s, r in ranked.items()}


async def vector_leg(
    tx: ScopedTx,
    source: Source,
    vector: list[float],
    pool: int,
    base: dict[str, Any],
    rows_in_scope: int,
    exact_max_rows: int,
    ann_floor: int = ANN_FLOOR,
    passages: bool = False,
    first: Row | None = None,
) -> Ranked:
    """One kind's vector leg; for chunks with ``passages`` (``PALIMPSEST_PASSAGE_MAX`` above
    0), each chunk scored by the best of its own vector and its passages'. Off, no passage is
    read: a search then pays nothing for the feature. ``first``: the answer of the leg's
    first read, already read (``recall_one``: the same statement's body, asked for the same
    ``k``; a whole-scope read asked for at least as many rows, which is the same answer or
    none)."""
    legs, whole = LEGS[source], WHOLE[source]
    statement = whole if rows_in_scope <= exact_max_rows else legs.ann
    params = {**base, "vector": vector}
    k = pool
    while True:
        ask = max(k, ann_floor) if statement is legs.ann else k
        asked = {**params, "k": ask}
        if statement is whole:  # the whole scope, with room for rows written since the stats
            asked["n"] = max(ask, rows_in_scope + rows_in_scope // 8 + 16)
        if first is not None:
            rows, first = _columns([first]), None
        else:
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
        k = min(ask * 4, MAX_FETCH)  # filters thinned a full page: over-fetch past it
    kept = live[:pool]
    cosine = {r["id"]: 2.0 * float(r["score"]) - 1.0 for r in kept}
    cues = {r["id"]: Cues.of(r.get("cues")) for r in kept}
    ranked = Ranked(
        [r["id"] for r in kept],
        cosine,
        {r["id"] for r in rows if _dropped(r["live"], r.get("untimely", True))},
        cues,
        {r["id"]: r["row"] for r in kept if "row" in r},
    )
    if source is not Source.DOCUMENTS or not passages:
        return ranked
    return best_of(ranked, await passage_leg(tx, vector, pool, base, ann_floor), pool)


async def passage_leg(
    tx: ScopedTx, vector: list[float], pool: int, base: dict[str, Any], ann_floor: int
) -> Ranked:
    """Chunks by their best passage (``cypher/passages.py``), best first: the index asked for
    a few passages per chunk of the pool, the scope's passages scanned exactly when it read
    fewer than asked. Passages of a chunk's earlier text are passed over."""
    ask = max(pool * 4, ann_floor)
    params = {**base, "vector": vector, "k": ask}
    rows = _columns(await tx.run(pq.VECTOR_PASSAGES, params))
    if len(rows) < ask:
        rows = _columns(await tx.run(pq.EXACT_PASSAGES, params))
    best: dict[str, Row] = {}
    for r in rows:  # best first: a chunk's first row is its best passage
        if r["current"] and r["id"] not in best:
            best[r["id"]] = r
    live = [r for r in best.values() if r["live"]][:pool]
    return Ranked(
        [r["id"] for r in live],
        {r["id"]: 2.0 * float(r["score"]) - 1.0 for r in live},
        {r["id"] for r in best.values() if not r["live"]},
        {r["id"]: Cues.of(r.get("cues")) for r in live},
        {r["id"]: r["row"][0] for r in live if r["row"] and r["row"][0] is not None},
        {r["id"]: Passage(*r["passage"]) for r in live},
    )


def best_of(head: Ranked, passages: Ranked, pool: int) -> Ranked:
    """One list of chunks by the best of their vectors: the chunk's own (its head) or a
    passage's; the top ``pool``, ties by id. A chunk the head leg dropped stays dropped."""
    scores = dict(head.scores)
    by_passage: dict[str, Passage] = {}
    for i in passages.ids:
        if i in head.dropped:
            continue
        if i not in scores or passages.scores[i] > scores[i]:
            scores[i] = passages.scores[i]
            by_passage[i] = passages.passages[i]
    ids = sorted(scores, key=lambda i: (-scores[i], i))[:pool]
    return Ranked(
        ids,
        {i: scores[i] for i in ids},
        head.dropped | (passages.dropped - set(ids)),
        {i: head.cues.get(i) or passages.cues[i] for i in ids},
        {i: r for i in ids if (r := head.rows.get(i) or passages.rows.get(i)) is not None},
        {i: by_passage[i] for i in ids if i in by_passage},
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
    held: text.Held | None = None,
    spare_rows: int = SPARE_ROWS,
    engine: Engine = "cypher",
) -> Ranked:
    """Exact top-``pool`` live rows by scope-local BM25 (ties by id); with ``held``, the
    rows of the scope holding a query term are those (``recall_text``), and read no more.
    On the ``procedure`` engine each read is the extension's, which returns only the best
    rows of what it matched, scored: the pool, its scores and the rows dropped from it are
    the Cypher engine's (``tests/integration/test_text_procedure.py``)."""
    statement = LEGS[source].terms
    scorer = fulltext.Scorer.of(terms, stats, k1, b)
    scored: dict[str, tuple[float, bool]] = {}
    filtered_out: set[str] = set()  # not live, but not for the time view (expiry, prefix)

    def take(found: Row) -> None:
        # The record's parallel lists, read as they are: no dictionary per row.
        ids = found["ids"]
        untimely = found.get("untimely", [True] * len(ids))
        if "scores" in found:  # the procedure's rows come scored
            for row_id, score, live, late in zip(
                ids, found["scores"], found["live"], untimely, strict=True
            ):
                if row_id not in scored:
                    scored[row_id] = (float(score), bool(live))
                    if not _dropped(live, late):
                        filtered_out.add(row_id)
            return
        rows = zip(
            ids, found["lens"], found["live"], found["ft"], found["tf"], untimely, strict=True
        )
        for row_id, length, live, ft, tf, late in rows:
            if row_id not in scored:
                scored[row_id] = (scorer.score(ft, tf, int(length)), bool(live))
                if not _dropped(live, late):
                    filtered_out.add(row_id)

    procedure = (
        text.Procedure(PROCEDURE_TERMS[source], KIND[source], scorer, pool)
        if engine == "procedure"
        else None
    )
    reader = text.Reader(tx, statement, stats, base, take, held, procedure)
    if not await reader.covering(terms, pool, k1, b, scored, cover_min_rows):
        done: set[str] = set()
        batch = fulltext.first_terms(terms, stats, pool, spare_rows)
        while batch:
            lucene = fulltext.lucene_terms(tx.ref.scope_key, batch)
            most = text.most_holding(batch, stats)
            take(await reader.rows(lucene, most, text.any_of(batch), [[t] for t in batch]))
            done |= set(batch)
            batch = fulltext.missing_terms(terms, done, stats, k1, b, text.best_score(scored, pool))
    live, dropped = text_pool(scored, filtered_out, pool)
    if held is None:
        cues, shown = await _cues(tx, source, live)
    else:
        raw = held.cues()
        cues, shown = {i: Cues.of(raw.get(i)) for i in live}, {}
    return Ranked(live, {i: scored[i][0] for i in live}, dropped, cues, shown)


def text_pool(
    scored: Mapping[str, tuple[float, bool]], filtered_out: set[str], pool: int
) -> tuple[list[str], set[str]]:
    """A full-text leg's pool from its scored rows, best first (ties by id), without sorting
    every row read (tens of thousands on a big scope); and the rows the time view dropped
    from it (not live, not ``filtered_out`` for expiry or prefix, scoring at its floor or
    above)."""
    live = heapq.nsmallest(
        pool, (i for i, (_, alive) in scored.items() if alive), key=lambda i: (-scored[i][0], i)
    )
    floor = scored[live[-1]][0] if len(live) == pool else float("-inf")
    dropped = {
        i
        for i, (score, alive) in scored.items()
        if not alive and score >= floor and i not in filtered_out
    }
    return live, dropped


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


def _columns(rows: list[Row]) -> list[Row]:
    """A leg's single record of parallel lists (``ids`` first), as one dict per row."""
    if not rows:
        return []
    [record] = rows
    names = [_SINGULAR.get(name, name) for name in record]
    return [dict(zip(names, values, strict=True)) for values in zip(*record.values(), strict=True)]


_SINGULAR = {
    "ids": "id",
    "scores": "score",
    "lens": "len",
    "cues": "cues",
    "rows": "row",
    "passages": "passage",
}


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
