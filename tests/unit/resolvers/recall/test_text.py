"""The text side in one statement (``recall_text.read_text_side``) against an in-memory scope
and the stand-in for Lucene of ``test_recall_legs``: the rows it holds answer the full-text
leg's reads, and the leg returns exactly the exhaustive scope-local BM25 pool (ties by id),
the scores and the rows the time view dropped above it, as its own reads do, whether the
held read is complete or cut at its limit (then the leg reads the kind itself), and runs no
read of its own when the rows are held."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking import fulltext as ft
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.recall import legs, text
from tests.unit.principals import principal
from tests.unit.resolvers.recall.test_legs import (
    K1,
    B,
    Rows,
    big_scope,
    exhaustive,
    random_scope,
    two_rare_terms_and_a_common_one,
)

CUE = [1_700_000_000_000, [2024], True, "ann", False]


class Scope1(Rows):
    """The scope of ``Rows``, answering ``READ_TEXT_SIDE`` too: the statistics as rows, and
    the chunks holding any query term, in Lucene's unrelated order, cut at ``$k``. With
    ``lag``, the statement's gate counts that many rows fewer, as statistics that lag would
    (the answer can then be cut at ``$k``)."""

    def __init__(self, *args: Any, lag: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.names: list[str] = []
        self.lag = lag

    async def run(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        self.names.append(statement.name)
        if statement.name != "READ_TEXT_SIDE":
            return await super().run(statement, params)
        stats = self.stats()
        rows: list[Row] = [
            {"kind": "chunk", "term": "", "df": stats.rows, "len": stats.length, "bounded": True}
        ]
        for t in params["terms"][1:]:
            if stats.df.get(t, 0) > 0:
                tf, ratio = stats.peaks.get(t, (0, 0.0))
                bounded = t in stats.peaks
                rows.append(
                    {"kind": "chunk", "term": t, "df": stats.df[t], "len": 0, "max_tf": tf,
                     "max_ratio": ratio, "bounded": bounded}
                )  # fmt: skip
        total = sum(r["df"] for r in rows[1:])
        chunk = None
        if params["hold_chunk"] and total > 0 and total - self.lag < params["k"]:
            lucene = ft.lucene_terms(params["scope_key"], sorted(set(params["terms"][1:])))
            [found] = await super().run(Statement("TERMS_CHUNKS", ""), {**params, "lucene": lucene})
            chunk = {**found, "cues": [CUE for _ in found["ids"]]}
        return [{"stats": rows, "memory": None, "chunk": chunk, "fact": None}]


def leg(
    scope: Scope1, terms: list[str], pool: int, cover: int, most: int, spare: int = 0
) -> legs.Ranked:
    ref = resolve_scope(principal_(), Scope.USER)
    tx = ScopedTx(scope.run, ref)

    async def work() -> legs.Ranked:
        side = await text.read_text_side(tx, ["chunk"], terms, False, {}, ["chunk"], most)
        stats = side.kinds["chunk"]
        exact = scope.stats()  # the statistics, read in the same statement
        assert stats == KindStats(
            exact.rows,
            exact.length,
            {t: exact.df[t] for t in terms if exact.df.get(t, 0) > 0},
            {t: exact.peaks[t] for t in terms if t in exact.peaks},
        )
        return await legs.fulltext_leg(
            tx,
            Source.DOCUMENTS,
            terms,
            stats,
            pool,
            {},
            K1,
            B,
            cover_min_rows=cover,
            held=side.held.get("chunk"),
            spare_rows=spare,
        )

    return asyncio.run(work())


def principal_() -> Principal:
    return principal()


def own_reads(
    scope: Scope1, terms: list[str], pool: int, cover: int, spare: int = 0
) -> legs.Ranked:
    """The leg with its own reads (the statistics as the fake scope has them)."""
    ref = resolve_scope(principal_(), Scope.USER)
    tx = ScopedTx(scope.run, ref)
    stats = scope.stats()
    work = legs.fulltext_leg(
        tx, Source.DOCUMENTS, terms, stats, pool, {}, K1, B, cover, spare_rows=spare
    )
    return asyncio.run(work)


@settings(deadline=None, max_examples=300)
@given(st.integers(min_value=0, max_value=100_000))
def test_the_held_rows_give_exactly_the_pool_of_the_legs_own_reads(seed: int) -> None:
    rng = random.Random(seed)
    rows, dead, terms, pool = random_scope(rng)
    cover = rng.choice([0, 1, 10**9])
    # Held whole, or not at all (too many rows), or cut at the limit (the statistics lag).
    most = rng.choice([text.HELD_MAX_ROWS, 10**9, rng.randint(1, 60)])
    lag = rng.choice([0, 0, 10**9])
    spare = rng.choice([0, legs.SPARE_ROWS, rng.randint(1, 100)])
    scope = Scope1(rows, dead, rng.randrange(1000), peaks=rng.random() < 0.7, lag=lag)
    found = leg(scope, terms, pool, cover, most, spare)
    live, dropped = exhaustive(scope, terms, pool)
    assert found.ids == live
    assert found.dropped == dropped
    # The leg's own reads, taking no more terms first than they must.
    own = own_reads(Scope1(rows, dead, 0, peaks=scope.peaks), terms, pool, cover)
    assert (found.ids, found.scores, found.dropped) == (own.ids, own.scores, own.dropped)
    if "TERMS_CHUNKS" not in scope.names:  # held: no read, and the cues came with the rows
        assert scope.names == ["READ_TEXT_SIDE"]
        assert all(c.speaker == "ann" for c in found.cues.values())
        assert set(found.cues) == set(found.ids)


def test_a_held_read_cut_at_its_limit_is_read_again_by_the_leg() -> None:
    rows = {f"r{i:03d}": Counter({"alpha": 1, f"x{i}": 1}) for i in range(35)}
    rows |= {f"s{i:03d}": Counter({"alpha": 2}) for i in range(5)}
    best = sorted(f"s{i:03d}" for i in range(5))
    whole = Scope1(rows, set(), 3, lag=10**9)
    assert leg(whole, ["alpha"], 5, 10**9, 41).ids == best
    assert whole.names == ["READ_TEXT_SIDE"]  # 40 rows, fewer than the limit: held
    cut = Scope1(rows, set(), 3, lag=10**9)
    assert leg(cut, ["alpha"], 5, 10**9, 40).ids == best
    # 40 rows answered of 40 asked: perhaps cut, so the leg reads the kind itself.
    assert cut.names == ["READ_TEXT_SIDE", "TERMS_CHUNKS", "CUES_CHUNKS"]


def test_the_covering_reads_are_answered_from_the_held_rows() -> None:
    # The scopes where the legs' own reads take both covering steps: held whole, the same
    # pool (the second step reads the rows holding a set of terms, less the seed's).
    rows = two_rare_terms_and_a_common_one()
    rows |= {f"e{i:04d}": Counter({"alpha": 3, "beta": 3, f"w{i}": 1}) for i in range(40)}
    terms = ["alpha", "beta", "gamma"]
    for scope, query in [
        (Scope1(rows, {"d0003", "e0007"}, 3), terms),
        (Scope1(big_scope().rows, {"c0003"}, 7), ["alpha", "beta"]),
    ]:
        found = leg(scope, query, 20, 0, 10**9)
        assert scope.names == ["READ_TEXT_SIDE"]
        assert (found.ids, found.dropped) == exhaustive(scope, query, 20)


@settings(deadline=None, max_examples=200)
@given(st.integers(min_value=0, max_value=100_000))
def test_a_held_read_keeps_the_rows_lucene_would_answer(seed: int) -> None:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(rng.randint(2, 8))]
    rows = {f"r{i:03d}": Counter(rng.sample(vocab, rng.randint(1, len(vocab)))) for i in range(60)}
    scope = Scope1(rows, set(), 1)
    key = resolve_scope(principal_(), Scope.USER).scope_key

    async def lucene(query: str) -> list[str]:
        params = {"lucene": query, "k": 10**9, "scope_key": key}
        [found] = await scope.run(Statement("TERMS_CHUNKS", ""), params)
        return sorted(found["ids"])

    everything = {"lucene": ft.lucene_terms(key, vocab), "k": 10**9, "scope_key": key}
    [found] = asyncio.run(scope.run(Statement("TERMS_CHUNKS", ""), everything))
    held = text.Held.of(found)
    sets = [rng.sample(vocab, rng.randint(1, len(vocab))) for _ in range(rng.randint(1, 4))]
    unless = rng.sample(vocab, rng.randint(1, len(vocab))) if rng.random() < 0.5 else []
    terms = rng.sample(vocab, rng.randint(1, len(vocab)))
    for query, holds in [
        (ft.lucene_sets(key, sets, unless), text.sets_of(sets, unless)),
        (ft.lucene_terms(key, terms), text.any_of(terms)),
    ]:
        assert sorted(held.where(holds)["ids"]) == asyncio.run(lucene(query))
