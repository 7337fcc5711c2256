"""The whole-scope vector legs (``cypher/recall_whole.py``) on the real Neo4j, against an
exhaustive oracle: every embedded row of the scope scored with numpy, best first, ties by id.

Rows are written straight to the graph (random unit vectors, some repeated so scores tie
exactly, some chunks not live), in a scope of their own beside a second scope holding the
query's own vector. The statement must answer the oracle's top-k, ids and scores, and the
exact scan's answer; and answer no rows at all whenever the index did not give it every row.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j import Driver

from palimpsest.cypher import recall as q
from palimpsest.cypher import recall_whole as wq
from palimpsest.cypher.executor import Row, ScopedTx, Statement
from palimpsest.identity import Scope
from palimpsest.recall import Source
from palimpsest.resolvers import recall_legs as legs
from palimpsest.resolvers.services import Services
from tests.unit.principals import scope_ref

pytestmark = pytest.mark.integration

DIMS = 384
KINDS = {
    Source.DOCUMENTS: (wq.WHOLE_CHUNKS, q.EXACT_CHUNKS),
    Source.NOTES: (wq.WHOLE_MEMORY, q.EXACT_MEMORY),
    Source.FACTS: (wq.WHOLE_FACTS, q.EXACT_FACTS),
}
WRITE = {
    Source.DOCUMENTS: """UNWIND $rows AS r
CREATE (:Chunk {scope_key: $scope_key, id: r.id, embedding: r.embedding, text: 't',
                index: CASE WHEN r.live THEN 0 END, created_at: datetime()})""",
    Source.NOTES: """UNWIND $rows AS r
CREATE (:Memory {scope_key: $scope_key, key: r.id, embedding: r.embedding, text: 't',
                 created_at: datetime()})""",
    Source.FACTS: """CREATE (s:Entity {scope_key: $scope_key, id: $scope_key + '-s'})
CREATE (o:Entity {scope_key: $scope_key, id: $scope_key + '-o'})
WITH s, o UNWIND $rows AS r
CREATE (s)-[:FACT {scope_key: $scope_key, id: r.id, embedding: r.embedding,
                   created_at: datetime()}]->(o)""",
}
ERASE = """MATCH (n {scope_key: $scope_key}) DETACH DELETE n"""
BASE = {
    "prefix": "",
    "now": None,
    "known_at": None,
    "include_retired": True,
    "as_of": None,
    "open_end": None,
    "include_refuted": True,
    "min_confidence": 0.0,
}


def unit_vectors(rng: np.random.Generator, n: int, repeats: int) -> np.ndarray:
    m = rng.normal(size=(n, DIMS))
    m[len(m) - repeats :] = m[0]  # the last rows repeat the first: exact ties, broken by id
    unit: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return unit


def rows_of(m: np.ndarray, prefix: str, live: float) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}{i:04d}", "embedding": [float(x) for x in v], "live": i % 7 >= live}
        for i, v in enumerate(m)
    ]


def oracle(m: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[tuple[str, float]]:
    """Every row scored (Neo4j's normalised cosine), best first, ties by id."""
    cos = (m @ query) / (np.linalg.norm(m, axis=1) * np.linalg.norm(query))
    scored = sorted(((-(1 + c) / 2, i) for c, i in zip(cos, ids, strict=True)))
    return [(i, -s) for s, i in scored[:k]]


def run(driver: Driver, statement: Statement, params: dict[str, Any]) -> dict[str, Any]:
    with driver.session() as session:
        [record] = list(session.run(statement.text, params))
        return dict(record)


class Seen(ScopedTx):
    """A scoped handle that notes the name of every statement it runs."""

    def __init__(self, tx: ScopedTx, names: list[str]) -> None:
        super().__init__(tx.run, tx.ref)  # never called: ``run`` goes to ``tx`` itself
        self.tx, self.names = tx, names

    async def run(self, statement: Statement, params: Mapping[str, Any] | None = None) -> list[Row]:
        self.names.append(statement.name)
        return await self.tx.run(statement, params)


@pytest.fixture
def keys(neo4j_driver: Driver) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    with neo4j_driver.session() as session:
        for key in made:
            session.run(ERASE, scope_key=key).consume()


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 120),
    repeats=st.integers(0, 5),
    k=st.integers(1, 60),
    kind=st.sampled_from(sorted(KINDS, key=str)),
)
def test_the_whole_scope_from_the_index_is_the_oracles_top_k(
    neo4j_driver: Driver,
    keys: list[str],
    seed: int,
    n: int,
    repeats: int,
    k: int,
    kind: Source,
) -> None:
    rng = np.random.default_rng(seed)
    mine, other = f"whole-{uuid.uuid4().hex}", f"whole-{uuid.uuid4().hex}"
    keys += [mine, other]
    m = unit_vectors(rng, n, min(repeats, n - 1))
    query = rng.normal(size=DIMS)
    rows = rows_of(m, mine + "-r", 1)
    with neo4j_driver.session() as session:
        session.run(WRITE[kind], scope_key=mine, rows=rows).consume()
        # Another scope holding the query's own vector: never part of this scope's answer.
        twin = rows_of(np.asarray([query / np.linalg.norm(query)] * 3), other + "-a", 0)
        session.run(WRITE[kind], scope_key=other, rows=twin).consume()
        session.run("CALL db.awaitIndexes(120)").consume()
    whole, exact = KINDS[kind]
    params = {**BASE, "scope_key": mine, "vector": [float(x) for x in query], "k": k}
    got = run(neo4j_driver, whole, {**params, "n": n + 16})
    want = oracle(m, [r["id"] for r in rows], query, k)
    assert got["ids"] == [i for i, _ in want]
    assert got["scores"] == pytest.approx([s for _, s in want], abs=1e-6)
    scanned = run(neo4j_driver, exact, params)
    assert (got["ids"], got["scores"]) == (scanned["ids"], scanned["scores"])
    assert got["live"] == scanned["live"]
    # Asked for fewer rows than the scope holds: the index's answer cannot be known whole, so
    # the statement answers nothing (and the leg scans), never a partial top-k.
    if n > 1:
        short = run(neo4j_driver, whole, {**params, "n": n - 1})
        assert short["ids"] == []


def test_a_row_the_index_does_not_hold_makes_the_answer_empty(
    neo4j_driver: Driver, keys: list[str]
) -> None:
    key = f"whole-{uuid.uuid4().hex}"
    keys.append(key)
    m = unit_vectors(np.random.default_rng(7), 10, 0)
    rows = rows_of(m, key + "-r", 0)
    rows[3]["embedding"] = rows[3]["embedding"][:8]  # not the index's dimensions: not indexed
    with neo4j_driver.session() as session:
        session.run(WRITE[Source.DOCUMENTS], scope_key=key, rows=rows).consume()
        session.run("CALL db.awaitIndexes(120)").consume()
    params = {**BASE, "scope_key": key, "vector": [float(x) for x in m[0]], "k": 5, "n": 100}
    assert run(neo4j_driver, wq.WHOLE_CHUNKS, params)["ids"] == []


async def test_the_leg_answers_as_the_scan_and_falls_back_when_the_index_is_short(
    svc: Services, neo4j_driver: Driver, keys: list[str]
) -> None:
    ref = scope_ref(f"whole-{uuid.uuid4().hex[:8]}", Scope.USER, "alice")
    keys.append(ref.scope_key)
    m = unit_vectors(np.random.default_rng(11), 90, 3)
    with neo4j_driver.session() as session:
        rows = rows_of(m, ref.scope_key + "-r", 2)
        session.run(WRITE[Source.DOCUMENTS], scope_key=ref.scope_key, rows=rows).consume()
        session.run("CALL db.awaitIndexes(120)").consume()
    query = [float(x) for x in np.random.default_rng(12).normal(size=DIMS)]
    seen: list[str] = []

    async def leg(rows_in_scope: int, exact_max_rows: int) -> legs.Ranked:
        async def work(tx: ScopedTx) -> legs.Ranked:
            return await legs.vector_leg(
                Seen(tx, seen), Source.DOCUMENTS, query, 20, BASE, rows_in_scope, exact_max_rows
            )

        return await svc.db.scoped(ref).read_tx(work)

    whole = await leg(90, 2000)
    assert set(seen) == {"WHOLE_CHUNKS"}  # over-fetched past the rows not live: still whole
    seen.clear()
    scanned = await leg(0, 2000)  # statistics far behind: the index is asked for too few rows
    assert seen[:2] == ["WHOLE_CHUNKS", "EXACT_CHUNKS"]
    assert set(seen[2:]) <= {"EXACT_CHUNKS"}
    assert (whole.ids, whole.scores) == (scanned.ids, scanned.scores)
    live = [r for r in rows if r["live"]]
    want = oracle(
        np.asarray([r["embedding"] for r in live]), [r["id"] for r in live], np.asarray(query), 20
    )
    assert whole.ids == [i for i, _ in want]
