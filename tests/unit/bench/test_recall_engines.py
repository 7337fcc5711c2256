"""``recall-latency --growth --engines``'s pure parts: the engines named, the pools compared,
the full-text legs' time, the ratios and the row a size gets (the run needs Neo4j with the
extension)."""

from __future__ import annotations

import pytest

from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.recall.fusion import RankedList
from palimpsest.resolvers.recall.legs import Ranked
from palimpsest_bench import recall_engines as re
from palimpsest_bench.common import principal
from palimpsest_bench.recall_growth import engine_figures


def _list(
    leg: str, source: Source, ids: list[str], scores: list[float], dropped: set[str]
) -> RankedList:
    ref = resolve_scope(principal("t", "u"), Scope.USER)
    return RankedList(leg, source, ref, Ranked(ids, dict(zip(ids, scores, strict=True)), dropped))


def test_pools_compare_the_fulltext_legs_whole_and_nothing_else() -> None:
    a = [
        _list("fulltext", Source.DOCUMENTS, ["c1", "c2"], [2.5, 1.0], {"c9"}),
        _list("vector", Source.DOCUMENTS, ["c2"], [0.9], set()),
    ]
    same = [
        _list("vector", Source.DOCUMENTS, ["c3"], [0.1], set()),  # vector legs do not count
        _list("fulltext", Source.DOCUMENTS, ["c1", "c2"], [2.5, 1.0], {"c9"}),
    ]
    assert re.pools_of(a) == re.pools_of(same)
    # Order, a score's last bit and the dropped rows each make a pool another.
    swapped = [_list("fulltext", Source.DOCUMENTS, ["c2", "c1"], [1.0, 2.5], {"c9"})]
    last_bit = [
        _list("fulltext", Source.DOCUMENTS, ["c1", "c2"], [2.5, 1.0000000000000002], {"c9"})
    ]
    undropped = [_list("fulltext", Source.DOCUMENTS, ["c1", "c2"], [2.5, 1.0], set())]
    for other in (swapped, last_bit, undropped):
        assert re.pools_of(a) != re.pools_of(other)


def test_the_fulltext_leg_time_sums_every_kinds_leg_and_only_theirs() -> None:
    seen = {
        "fulltext_documents": 12.5,
        "fulltext_notes": 2.5,
        "vector_documents": 40.0,
        "resolver": 60.0,
    }
    assert re.fulltext_ms(seen) == 15.0
    assert re.fulltext_ms({"vector_documents": 3.0}) == 0.0


def test_ratios_are_each_engine_over_the_last() -> None:
    by_engine = {
        "procedure": {
            "p50_ms": 20.0,
            "p95_ms": 30.0,
            "fulltext_leg_p50_ms": 5.0,
            "fulltext_leg_p95_ms": 10.0,
        },
        "cypher": {
            "p50_ms": 40.0,
            "p95_ms": 60.0,
            "fulltext_leg_p50_ms": 0.0,
            "fulltext_leg_p95_ms": 40.0,
        },
    }
    assert re.ratios(by_engine) == {
        "procedure/cypher": {
            "p50_ms": 0.5,
            "p95_ms": 0.5,
            "fulltext_leg_p50_ms": None,  # nothing to divide by
            "fulltext_leg_p95_ms": 0.25,
        }
    }


def test_a_tally_reads_its_percentiles_and_stages() -> None:
    tally = re.Tally(
        total=[float(v) for v in range(1, 101)],
        fulltext=[float(v) / 2 for v in range(1, 101)],
        stages=[{"total": 1.0, "fulltext_documents": 0.5}],
    )
    figures = tally.figures()
    assert (figures["p50_ms"], figures["p95_ms"]) == (figures["p50"], figures["p95"])
    assert figures["fulltext_leg_p95_ms"] == pytest.approx(figures["p95_ms"] / 2, abs=0.01)
    assert figures["stages"]["fulltext_documents"]["n"] == 1


def test_a_sizes_row_reads_the_first_engines_figures() -> None:
    compared = {
        "by_engine": {
            "procedure": {"p50": 1.0, "p95": 2.0, "p99": 3.0, "stages": {"x": {}}},
            "cypher": {"p50": 10.0, "p95": 20.0, "p99": 30.0, "stages": {}},
        },
        "load_avg_before": [1.0],
        "load_avg_after": [2.0],
        "cpu_steal_s": 0.5,
    }
    row = engine_figures(compared, "procedure")
    assert (row["p50"], row["p95"], row["raw_p50"], row["stages"]) == (1.0, 2.0, 1.0, {"x": {}})
    assert row["cpu_steal_s"] == 0.5
