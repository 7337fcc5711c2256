"""The product's full-text leg against an in-memory scope and a stand-in for Lucene that
matches its queries term by term and ranks matches in an order unrelated to BM25: the leg
returns exactly the exhaustive scope-local BM25 pool (ties by id) and exactly the rows the
time view dropped above it, whatever order Lucene answers in and however the batches fall."""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking import fulltext as ft
from palimpsest.domain.ranking.fulltext import KindStats, Stored
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.recall import legs
from tests.unit.principals import principal

K1, B = 1.2, 0.75


class Rows:
    """One scope's chunks, and Lucene's part in the leg: which rows hold the queried terms
    (``ft:"t"`` clauses joined by OR; AND inside parentheses; AND NOT a last group),
    answered in an order unrelated to BM25 (a hash of the id) and cut at the query's limit,
    as Lucene cuts its own ranking."""

    def __init__(
        self, rows: dict[str, Counter[str]], dead: set[str], salt: int, peaks: bool = False
    ) -> None:
        self.rows, self.dead, self.salt, self.peaks = rows, dead, salt, peaks
        self.reads: list[int] = []  # rows answered, per full-text query

    def stats(self) -> KindStats:
        df: Counter[str] = Counter()
        for r in self.rows.values():
            df.update(set(r))
        delta = ft.StatsDelta()
        for r in self.rows.values():
            delta.add(r)
        length = sum(sum(r.values()) for r in self.rows.values())
        return KindStats(len(self.rows), length, df, delta.peaks if self.peaks else {})

    async def run(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "CUES_CHUNKS":
            ids = list(params["ids"])
            return [{"ids": ids, "cues": [[None, None, False, None, False] for _ in ids]}]
        assert statement.name == "TERMS_CHUNKS"
        query, _, unless = params["lucene"].partition(" AND NOT ")
        match = re.fullmatch(r'scope_key:"(\w+)" AND \((.*)\)', query)
        assert match is not None
        assert match[1] == params["scope_key"]  # the scope clause is always there
        sets = [re.findall(r'ft:"(\w+)"', g) for g in match[2].split(" OR ")]
        besides = re.findall(r'ft:"(\w+)"', unless)
        hits = [
            i
            for i, r in self.rows.items()
            if any(all(r[t] for t in s) for s in sets)
            and not (besides and all(r[t] for t in besides))
        ]
        hits.sort(key=lambda i: hash((self.salt, i)))
        hits = hits[: params["k"]]
        self.reads.append(len(hits))
        stored = [Stored.of(self.rows[i]) for i in hits]
        return [
            {
                "ids": hits,
                "lens": [s.length for s in stored],
                "live": [i not in self.dead for i in hits],
                "ft": [s.ft for s in stored],
                "tf": [s.tf for s in stored],
            }
        ]


def leg(
    scope: Rows, terms: list[str], pool: int, cover_min_rows: int = 0, spare: int = 0
) -> legs.Ranked:
    ref = resolve_scope(principal(), Scope.USER)
    tx = ScopedTx(scope.run, ref)
    stats = scope.stats()
    work = legs.fulltext_leg(
        tx,
        Source.DOCUMENTS,
        terms,
        stats,
        pool,
        {},
        K1,
        B,
        cover_min_rows=cover_min_rows,
        spare_rows=spare,
    )
    return asyncio.run(work)


def exhaustive(scope: Rows, terms: list[str], pool: int) -> tuple[list[str], set[str]]:
    """The live top pool by BM25 (ties by id), and the rows the time view dropped above it."""
    scorer = ft.Scorer.of(terms, scope.stats(), K1, B)
    scores = {}
    for i, r in scope.rows.items():
        if any(r[t] for t in terms):
            s = Stored.of(r)
            scores[i] = scorer.score(s.ft, s.tf, s.length)
    order = sorted(scores, key=lambda i: (-scores[i], i))
    live = [i for i in order if i not in scope.dead][:pool]
    floor = scores[live[-1]] if len(live) == pool else float("-inf")
    return live, {i for i in order if i in scope.dead and scores[i] >= floor}


def random_scope(
    rng: random.Random,
) -> tuple[dict[str, Counter[str]], set[str], list[str], int]:
    """A random scope's rows (Zipf-like terms), its dead rows, a query's terms and a pool."""
    vocab = [f"w{i}" for i in range(rng.randint(3, 40))]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    rows = {
        f"r{i:04d}": Counter(rng.choices(vocab, weights, k=rng.randint(1, 14)))
        for i in range(rng.randint(1, 300))
    }
    dead = {i for i in rows if rng.random() < 0.1}
    terms = list(dict.fromkeys(rng.choices(vocab, k=rng.randint(1, 9))))
    return rows, dead, terms, rng.randint(1, 25)


@settings(deadline=None, max_examples=300)
@given(st.integers(min_value=0, max_value=100_000))
def test_the_leg_finds_exactly_the_exhaustive_pool_whatever_order_lucene_answers_in(
    seed: int,
) -> None:
    rng = random.Random(seed)
    rows, dead, terms, pool = random_scope(rng)
    scope = Rows(rows, dead, rng.randrange(1000), peaks=rng.random() < 0.7)
    # The covering read on (from the first row) or off (the rarest-terms-first read alone);
    # the first read taking no more terms than it must, the product's spare rows, or all.
    spare = rng.choice([0, legs.SPARE_ROWS, rng.randint(1, 100), 10**9])
    found = leg(scope, terms, pool, rng.choice([0, 1, 10**9]), spare)
    live, dropped = exhaustive(scope, terms, pool)
    assert found.ids == live
    assert found.dropped == dropped


def big_scope() -> Rows:
    """Two terms held by a thousand rows each, and together, often, by fifty rows."""
    rows = {f"a{i:04d}": Counter({"alpha": 1, f"x{i % 7}": 1}) for i in range(1000)}
    rows |= {f"b{i:04d}": Counter({"beta": 1, f"y{i % 7}": 1}) for i in range(1000)}
    rows |= {f"c{i:04d}": Counter({"alpha": 3, "beta": 3}) for i in range(50)}
    return Rows(rows, {"c0003"}, 7)


def test_the_covering_read_spares_the_rows_that_cannot_reach_the_pool() -> None:
    scope = big_scope()
    found = leg(scope, ["alpha", "beta"], 20)
    assert (found.ids, found.dropped) == exhaustive(scope, ["alpha", "beta"], 20)
    assert scope.reads == [50]  # the rows holding both terms, and no others


def test_below_its_size_the_covering_read_is_not_tried() -> None:
    scope = big_scope()
    found = leg(scope, ["alpha", "beta"], 20, cover_min_rows=1051)
    assert (found.ids, found.dropped) == exhaustive(scope, ["alpha", "beta"], 20)
    assert scope.reads == [1050]  # the rarest term's rows, all of them


def two_rare_terms_and_a_common_one() -> dict[str, Counter[str]]:
    """A thousand rows hold each rare term, three thousand the common one, thirty all three."""
    rows = {f"a{i:04d}": Counter({"alpha": 1, f"x{i}": 2}) for i in range(1000)}
    rows |= {f"b{i:04d}": Counter({"beta": 1, f"y{i}": 2}) for i in range(1000)}
    rows |= {f"c{i:04d}": Counter({"gamma": 1, f"z{i}": 5}) for i in range(3000)}
    rows |= {f"d{i:04d}": Counter({"alpha": 3, "beta": 3, "gamma": 1}) for i in range(30)}
    return rows


def test_rows_holding_a_set_of_terms_are_read_once_and_no_others() -> None:
    # Rows holding all three terms set the threshold; only rows holding both rare terms could
    # still reach it (the common term adds little), and they are read next, without those
    # read already; the rows of each rare term alone are never read.
    rows = two_rare_terms_and_a_common_one()
    rows |= {f"e{i:04d}": Counter({"alpha": 3, "beta": 3, f"w{i}": 1}) for i in range(40)}
    scope = Rows(rows, {"d0003", "e0007"}, 3)
    terms = ["alpha", "beta", "gamma"]
    found = leg(scope, terms, 20)
    assert (found.ids, found.dropped) == exhaustive(scope, terms, 20)
    assert scope.reads == [30, 40]


def test_the_covering_read_is_not_tried_when_few_rows_would_hold_every_term() -> None:
    # 500 of 20,000 rows hold each term: about 12 would hold both, fewer than the pool.
    filler = Counter({"zzz": 1})
    rows = {f"f{i:05d}": filler for i in range(19_000)}
    rows |= {f"a{i:04d}": Counter({"alpha": 1}) for i in range(500)}
    rows |= {f"b{i:04d}": Counter({"beta": 1}) for i in range(500)}
    scope = Rows(rows, set(), 2)
    found = leg(scope, ["alpha", "beta"], 20)
    assert (found.ids, found.dropped) == exhaustive(scope, ["alpha", "beta"], 20)
    assert scope.reads[0] == 500  # the rarest term's rows first, not the rows holding both


def test_when_few_rows_would_hold_every_term_the_rarest_ones_seed_the_read() -> None:
    # Of 20,000 rows, about 1,000 hold "gamma" and 2,000 each of the others: about 10 would
    # hold all three, but 100 the two rarest, so the rows holding those seed the pool.
    filler = Counter({"zzz": 1})
    rows = {f"f{i:05d}": filler for i in range(15_070)}
    rows |= {f"a{i:04d}": Counter({"alpha": 1, f"x{i}": 3}) for i in range(1940)}
    rows |= {f"b{i:04d}": Counter({"beta": 1, f"y{i}": 3}) for i in range(1995)}
    rows |= {f"c{i:04d}": Counter({"gamma": 1, f"z{i}": 3}) for i in range(940)}
    rows |= {f"g{i:04d}": Counter({"alpha": 2, "gamma": 2}) for i in range(50)}
    rows |= {
        f"h{i:04d}": Counter({"alpha": 1, "beta": 1, "gamma": 1, f"w{i}": 5}) for i in range(5)
    }
    rows |= {f"k{i:04d}": Counter({"beta": 3, "gamma": 3}) for i in range(10)}
    terms = ["alpha", "beta", "gamma"]
    scope = Rows(rows, {"g0004"}, 4, peaks=True)
    found = leg(scope, terms, 20)
    assert (found.ids, found.dropped) == exhaustive(scope, terms, 20)
    # The rows holding "alpha" and "gamma"; then those holding "beta" and "gamma", less them.
    assert scope.reads == [55, 10]


def test_a_query_of_more_terms_than_sets_can_cover_is_read_rarest_first() -> None:
    words = [f"w{i}" for i in range(ft.MAX_COVER_TERMS + 1)]
    rows = {f"r{i:04d}": Counter(words) for i in range(300)}
    scope, alone = Rows(rows, set(), 6), Rows(rows, set(), 6)
    found = leg(scope, words, 20)
    assert (found.ids, found.dropped) == exhaustive(scope, words, 20)
    leg(alone, words, 20, cover_min_rows=10**9)
    assert scope.reads == alone.reads  # no read of the rows holding every term first


def test_maxscore_skips_the_rows_of_a_common_term() -> None:
    rows = {f"c{i:04d}": Counter({"common": 1, f"u{i}": 1}) for i in range(1000)}
    rows |= {f"r{i:04d}": Counter({"common": 1, "rare": 1}) for i in range(30)}
    scope = Rows(rows, set(), 5)
    found = leg(scope, ["common", "rare"], 20, cover_min_rows=10**9)
    assert (found.ids, found.dropped) == exhaustive(scope, ["common", "rare"], 20)
    assert scope.reads == [30]  # only the rare term's rows were enumerated


def test_the_first_read_takes_the_next_rarest_terms_while_their_rows_are_few() -> None:
    # MaxScore alone reads the rare term's rows, then the middling term's (it can still
    # reach the pool); with rows to spare, both in one read; never the common term's.
    rows = {f"c{i:04d}": Counter({"common": 1, f"u{i}": 1}) for i in range(1000)}
    rows |= {f"m{i:04d}": Counter({"common": 1, "mid": 2}) for i in range(100)}
    rows |= {f"r{i:04d}": Counter({"common": 1, "rare": 1, f"v{i}": 3}) for i in range(30)}
    terms = ["common", "mid", "rare"]
    alone, spared = Rows(rows, set(), 5), Rows(rows, set(), 5)
    for scope, spare in ((alone, 0), (spared, legs.SPARE_ROWS)):
        found = leg(scope, terms, 20, cover_min_rows=10**9, spare=spare)
        assert (found.ids, found.dropped) == exhaustive(scope, terms, 20)
    assert alone.reads == [30, 100]
    assert spared.reads == [130]


def test_the_covering_read_is_dropped_when_the_rarest_terms_rows_are_fewer() -> None:
    # The rows holding every term are long, so they score low, and each common term alone
    # could reach their pool: a covering read would read every common term's rows. The rare
    # term's rows are read instead, as without the covering read.
    rng = random.Random(1)
    rows = {
        f"p{i:04d}": Counter({w: 1 for w in ("bee", "cod", "doe") if rng.random() < 0.8})
        + Counter({f"x{i}": 1})
        for i in range(6000)
    }
    every = Counter({"rare": 1, "bee": 1, "cod": 1, "doe": 1, "filler": 100})
    rows |= {f"e{i:04d}": every for i in range(25)}
    rows |= {f"r{i:04d}": Counter({"rare": 3}) for i in range(30)}
    scope = Rows(rows, set(), 9)
    terms = ["rare", "bee", "cod", "doe"]
    found = leg(scope, terms, 20)
    assert (found.ids, found.dropped) == exhaustive(scope, terms, 20)
    assert scope.reads == [25, 55]  # rows holding every term, then the rare term's rows


def test_the_scopes_peaks_spare_rows_the_loose_bounds_would_read() -> None:
    # Rows holding the two rare terms once, among many other words, could reach the pool
    # only if a term could add its loose bound (an unbounded frequency); the scope's peaks
    # say none of them can, so only the rows holding every term are read.
    rows = two_rare_terms_and_a_common_one()
    rows |= {f"p{i:04d}": Counter({"alpha": 1, "beta": 1, f"w{i}": 10}) for i in range(500)}
    terms = ["alpha", "beta", "gamma"]
    loose, tight = Rows(rows, set(), 3), Rows(rows, set(), 3, peaks=True)
    assert (leg(loose, terms, 20).ids, leg(tight, terms, 20).ids) == (
        exhaustive(loose, terms, 20)[0],
        exhaustive(tight, terms, 20)[0],
    )
    assert (loose.reads, tight.reads) == ([30, 500], [30])
