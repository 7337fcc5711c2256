"""``bench postings-sim`` on a tiny growth scope: the block-max MaxScore over impact blocks and
the product's own leg both return exactly the exhaustive scope-local BM25 pool (ties by id),
and a stop rule that forgets a row can gain from several terms at once does not."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import cache

import pytest

from palimpsest.domain.ranking import fulltext
from palimpsest_bench import postings_sim as sim
from palimpsest_bench.postings_corpus import Corpus, Lucene, growth_queries, product_leg, scope_reps
from palimpsest_bench.recall_growth import growth_plan, picks_for
from palimpsest_bench.recall_load import ScopePlan

SIZE = 400
POOL = 5
VARIANTS = [(8, 2000), (8, 12), (16, 12), (0, 12), (0, 3)]


@cache
def plan() -> ScopePlan:
    return growth_plan([SIZE], tenant="bench-growth-test")[0]


@cache
def corpus() -> Corpus:
    return Corpus.of(scope_reps(plan()))


def queries() -> list[list[str]]:
    return [fulltext.query_terms(q, True) for q in growth_queries(SIZE, 60, 0)]


def blocks(levels: int, cap: int) -> sim.Blocks:
    return lambda term: sim.blocks_of(corpus(), term, levels, cap)


def test_the_scope_holds_exactly_its_planned_rows_and_their_statistics() -> None:
    c = corpus()
    assert len(c.ids) == c.stats.rows == SIZE
    assert c.stats.length == int(c.lengths.sum())
    assert {t: len(c.postings[t][0]) for t in c.postings} == dict(c.stats.df)


def test_the_queries_are_the_growth_runs_measured_ones() -> None:
    asked = [text for _, text in picks_for(plan(), 30 + 20)]
    assert growth_queries(SIZE, 20, 30) == asked[30:]


@pytest.mark.parametrize(("levels", "cap"), VARIANTS)
def test_block_max_returns_the_exhaustive_pool(levels: int, cap: int) -> None:
    for terms in queries():
        got = sim.block_max(corpus(), terms, POOL, blocks(levels, cap))
        assert (got.ids, got.scores) == sim.exhaustive(corpus(), terms, POOL), terms
        assert got.entries >= got.scored


def test_small_blocks_let_it_stop_before_reading_every_posting() -> None:
    read = [sim.block_max(corpus(), t, POOL, blocks(0, 3)).scored for t in queries()]
    holding = [len(corpus().holding_any(t)) for t in queries()]
    assert sum(read) < sum(holding)


def _one_term_rule(bounds: Sequence[float], threshold: float | None) -> bool:
    """Wrong: stops once no single term's best unread block can beat the threshold."""
    return threshold is not None and max(bounds) < threshold


def test_a_stop_rule_that_bounds_terms_one_at_a_time_misses_rows() -> None:
    missed = 0
    for terms in queries():
        got = sim.block_max(corpus(), terms, POOL, blocks(0, 3), _one_term_rule)
        missed += (got.ids, got.scores) != sim.exhaustive(corpus(), terms, POOL)
    assert missed > 0


def test_the_products_leg_returns_the_exhaustive_pool_and_counts_its_reads() -> None:
    for terms in queries():
        leg = asyncio.run(product_leg(corpus(), plan().ref, terms, POOL, sim.K1, sim.B))
        assert (leg.ids, leg.scores) == sim.exhaustive(corpus(), terms, POOL), terms
        assert leg.rows <= len(corpus().holding_any(terms)) * max(leg.reads, 1)


def test_the_lucene_stand_in_answers_sets_and_their_exceptions() -> None:
    c = corpus()
    a, b = sorted(c.postings, key=lambda t: -len(c.postings[t][0]))[:2]
    key = plan().key
    lucene = Lucene(c)
    both = set(lucene.match(fulltext.lucene_sets(key, [[a, b]]), key).tolist())
    assert both == set(c.holding(a).tolist()) & set(c.holding(b).tolist())
    only_a = set(lucene.match(fulltext.lucene_sets(key, [[a]], [a, b]), key).tolist())
    assert only_a == set(c.holding(a).tolist()) - both
    with pytest.raises(AssertionError, match="scope clause"):
        lucene.match(fulltext.lucene_terms(key, [a]), "0" * 16)
