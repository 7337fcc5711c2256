"""Pure parts of the latency and scale benchmarks: load batches and resuming, stage figures,
query picks, the scale server's settings, synthetic vectors. Nothing is timed here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from palimpsest.config import Settings
from palimpsest_bench import recall_latency as lat
from palimpsest_bench import recall_load as d
from palimpsest_bench import scale_server as srv
from palimpsest_bench.common import HashEmbedder


def test_batches_cover_every_document_once_in_order() -> None:
    plans = [d.ScopePlan("t", "a", 1234), d.ScopePlan("t", "b", 7)]
    got = list(d.batches(plans, 100))
    assert sum(size for _, _, size in got) == 1234 + 7
    for plan in plans:
        texts = [dr.markdown for p, drafts, _ in got if p is plan for dr in drafts]
        assert texts == [text for text, _ in d.documents_for(plan)]
    # A batch holds at least the asked chunks, except a scope's last one.
    sizes = [size for p, _, size in got if p is plans[0]]
    assert all(s >= 100 for s in sizes[:-1])
    assert all(len(drafts) <= 100 for _, drafts, _ in got)


def test_a_resumed_load_skips_exactly_the_written_batches() -> None:
    plan = d.ScopePlan("t", "a", 2000)
    whole = list(d.batches([plan], 300))
    cuts = sorted(d.boundaries(plan, 300))
    assert cuts[-1] == 2000
    done = cuts[2]  # three batches committed before the load stopped
    rest = list(d.batches([plan], 300, {plan.key: done}))
    assert [drafts for _, drafts, _ in rest] == [drafts for _, drafts, _ in whole[3:]]
    assert done + sum(size for _, _, size in rest) == 2000
    # A count between two batch boundaries cannot be resumed (the loader erases instead).
    assert done + 1 not in d.boundaries(plan, 300)


def test_stage_summary_percentiles_per_stage() -> None:
    per_query = [{"embedding": float(i), "load": 1.0} for i in range(1, 101)]
    per_query.append({"embedding": 50.0})  # a query without a load
    out = lat.stage_summary(per_query)
    assert set(out) == {"embedding", "load"}
    assert out["embedding"]["n"] == 101
    assert out["load"] == {"p50": 1.0, "p95": 1.0, "n": 100}
    assert out["embedding"]["p95"] == pytest.approx(95.0)


def test_stage_log_sums_each_stage_after_a_mark() -> None:
    log = lat.StageLog()
    log("embedding", 0.004)
    mark = len(log.samples)
    log("vector_documents", 0.002)
    log("vector_documents", 0.001)  # a second scope of the same request
    log("load", 0.0005)
    assert log.since(mark) == pytest.approx({"vector_documents": 3.0, "load": 0.5})


def test_query_picks_alternate_the_big_scope_and_are_stable() -> None:
    plans = d.latency_plan(10_000)
    picks = lat.query_picks(plans, 10_000, 40)
    assert [p.big for p, _ in picks[::2]] == [True] * 20
    assert not any(p.big for p, _ in picks[1::2])
    assert picks == lat.query_picks(plans, 10_000, 40)
    # The filtered plan's big scope is its 100 % share.
    shares = d.filtered_plan(1000)
    assert {p.chunks for p, _ in lat.query_picks(shares, 1000, 10)[::2]} == {1000}


def test_the_scale_server_never_takes_the_shared_ports(tmp_path: Path) -> None:
    for bolt, http in ((7687, 7486), (7698, 7486), (7699, 7474), (7699, 7485)):
        with pytest.raises(ValueError, match="must not use ports"):
            srv.scale_settings(tmp_path, 1000, bolt, http)
    s = srv.scale_settings(tmp_path, 1_000_000)
    assert (s.neo4j.bolt_port, s.neo4j.http_port, s.home) == (7699, 7486, tmp_path)
    assert s.neo4j.password is None  # its own generated password
    assert s.neo4j.uri is None


def test_the_scale_server_lets_a_scope_hold_the_whole_dataset(tmp_path: Path) -> None:
    # A 1M-chunk scope holds a root chunk per document beyond its 1M content chunks.
    assert srv.scale_settings(tmp_path, 1_000_000).limits.max_scope_chunks >= 2_000_000
    assert (
        srv.scale_settings(tmp_path, 1000).limits.max_scope_chunks
        == Settings().limits.max_scope_chunks
    )


def test_scale_server_memory_grows_with_the_dataset() -> None:
    small_heap, small_cache = srv.memory_for(10_000)
    heap, cache = srv.memory_for(1_000_000)
    assert (small_heap, small_cache) == ("1024m", "512m")
    assert heap == "3072m"
    # The page cache holds the million 384-float embeddings (8 bytes each) and then some.
    assert int(cache.removesuffix("m")) * 2**20 > 1_000_000 * 384 * 8


def test_hash_vectors_are_unit_stable_and_share_words() -> None:
    e = HashEmbedder("m", 384)
    a, b, c, a2 = e.embed(["harbor cargo dock", "cargo near the dock", "sourdough oven", "x"])
    assert a == e.embed(["harbor cargo dock"])[0]
    assert np.linalg.norm(a) == pytest.approx(1.0)
    assert np.dot(a, b) > 0.3 > abs(np.dot(a, c))
    assert len(a2) == 384


def test_disk_bytes_splits_the_store_from_the_transaction_logs(tmp_path: Path) -> None:
    s = srv.scale_settings(tmp_path, 1000)
    data = s.neo4j_home / "data"
    (data / "databases" / "neo4j").mkdir(parents=True)
    (data / "transactions" / "neo4j").mkdir(parents=True)
    (data / "databases" / "neo4j" / "neostore").write_bytes(b"x" * 300)
    (data / "transactions" / "neo4j" / "neostore.transaction.db.0").write_bytes(b"y" * 70)
    assert srv.disk_bytes(s) == {"store": 300, "transactions": 70}


def test_the_local_exact_top_orders_by_score_then_id() -> None:
    from palimpsest_bench.exact_local import _top

    scores = np.array([0.1, 0.9, 0.5, 0.9, 0.2, 0.5, 0.3, 0.0, 0.4, 0.1, 0.2, 0.3])
    ids = [f"i{n:02d}" for n in range(len(scores))][::-1]  # ids run against the order
    # Ties (0.9, 0.5) come out by id, as in ``ORDER BY score DESC, c.id``.
    assert [ids[i] for i in _top(scores, ids, 3)] == ["i08", "i10", "i06"]
    assert [scores[i] for i in _top(scores, ids, 5)] == [0.9, 0.9, 0.5, 0.5, 0.4]


def test_hash_matrix_rows_are_the_embedded_vectors() -> None:
    e = HashEmbedder("m", 384)
    texts = ["Maria sold the old cargo.", "comet orbit", ""]
    assert e.matrix(texts).tolist() == [list(v) for v in e.embed(texts)]
