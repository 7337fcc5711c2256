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

from palimpsest import fulltext as ft
from palimpsest.cypher.executor import Row, ScopedTx, Statement
from palimpsest.fulltext import KindStats, Stored
from palimpsest.identity import Scope, resolve_scope
from palimpsest.recall import Source
from palimpsest.resolvers import recall_legs as legs
from tests.unit.principals import principal

K1, B = 1.2, 0.75


class Rows:
    """One scope's chunks, and Lucene's part in the leg: which rows hold the queried terms
    (``ft:"t"`` clauses joined by OR; AND inside parentheses), answered in an order unrelated
    to BM25 (a hash of the id) and cut at the query's limit, as Lucene cuts its own ranking."""

    def __init__(self, rows: dict[str, Counter[str]], dead: set[str], salt: int) -> None:
        self.rows, self.dead, self.salt = rows, dead, salt

    def stats(self) -> KindStats:
        df: Counter[str] = Counter()
        for r in self.rows.values():
            df.update(set(r))
        return KindStats(len(self.rows), sum(sum(r.values()) for r in self.rows.values()), df)

    async def run(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "CUES_CHUNKS":
            ids = list(params["ids"])
            return [{"ids": ids, "cues": [[None, None, False, None, False] for _ in ids]}]
        assert statement.name == "TERMS_CHUNKS"
        match = re.fullmatch(r'scope_key:"(\w+)" AND \((.*)\)', params["lucene"])
        assert match is not None
        assert match[1] == params["scope_key"]  # the scope clause is always there
        sets = [re.findall(r'ft:"(\w+)"', g) for g in match[2].split(" OR ")]
        hits = [i for i, r in self.rows.items() if any(all(r[t] for t in s) for s in sets)]
        hits.sort(key=lambda i: hash((self.salt, i)))
        hits = hits[: params["k"]]
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


def leg(scope: Rows, terms: list[str], pool: int) -> legs.Ranked:
    ref = resolve_scope(principal(), Scope.USER)
    tx = ScopedTx(scope.run, ref)
    work = legs.fulltext_leg(tx, Source.DOCUMENTS, terms, scope.stats(), pool, {}, K1, B)
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


@settings(deadline=None, max_examples=300)
@given(st.integers(min_value=0, max_value=100_000))
def test_the_leg_finds_exactly_the_exhaustive_pool_whatever_order_lucene_answers_in(
    seed: int,
) -> None:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(rng.randint(3, 40))]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    rows = {
        f"r{i:04d}": Counter(rng.choices(vocab, weights, k=rng.randint(1, 14)))
        for i in range(rng.randint(1, 300))
    }
    dead = {i for i in rows if rng.random() < 0.1}
    terms = list(dict.fromkeys(rng.choices(vocab, k=rng.randint(1, 9))))
    pool = rng.randint(1, 25)
    scope = Rows(rows, dead, rng.randrange(1000))
    found = leg(scope, terms, pool)
    live, dropped = exhaustive(scope, terms, pool)
    assert found.ids == live
    assert found.dropped == dropped
