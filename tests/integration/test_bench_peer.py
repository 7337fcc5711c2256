"""``bench peer-latency``'s peer on the real Neo4j: its nodes and indexes are its own, it
answers, and nothing of it is left once dropped."""

from __future__ import annotations

from neo4j import Driver
from neo4j_graphrag.retrievers import HybridRetriever

from palimpsest_bench import peer_latency as pl
from palimpsest_bench.common import HashEmbedder

DIMS = 384


def _left(driver: Driver, peer: pl.Peer) -> tuple[int, int]:
    nodes = driver.execute_query(f"MATCH (n:{peer.label}) RETURN count(n) AS n").records[0]["n"]
    names = [peer.vector_index, peer.fulltext_index]
    indexes = driver.execute_query(
        "SHOW INDEXES YIELD name WHERE name IN $names RETURN count(*) AS n", names=names
    ).records[0]["n"]
    return int(nodes), int(indexes)


def test_the_peer_answers_on_its_own_label_and_leaves_nothing(neo4j_driver: Driver) -> None:
    model = HashEmbedder("hash", DIMS)
    ds = pl.synthetic(30, 2)
    turns = pl.turns_of(ds)
    peer = pl.Peer.new()
    try:
        peer.create(neo4j_driver, turns, model, DIMS)
        assert _left(neo4j_driver, peer) == (30, 2)
        # Only the run's own label: no product node was labelled or indexed.
        labelled = neo4j_driver.execute_query(
            f"MATCH (n:{peer.label}) WHERE size(labels(n)) > 1 RETURN count(n) AS n"
        ).records[0]["n"]
        assert labelled == 0
        retriever = HybridRetriever(
            neo4j_driver,
            peer.vector_index,
            peer.fulltext_index,
            pl.SameModel(model),
            return_properties=["unit", "text"],
            result_formatter=pl._item,
        )
        wanted = turns[7]
        ms, units = pl._peer_search(retriever, wanted.text)
        assert ms > 0
        assert units[0] == wanted.unit  # its own text ranks first on both indexes
        assert len(units) == 10
        assert set(units) <= {t.unit for t in turns}
    finally:
        peer.drop(neo4j_driver)
    assert _left(neo4j_driver, peer) == (0, 0)
