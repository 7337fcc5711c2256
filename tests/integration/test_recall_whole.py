"""The whole-scope vector legs (``cypher/recall_whole.py``) on the real Neo4j, against an
exhaustive oracle: every embedded row of the scope scored with numpy, best first, ties by id.

Rows are written straight to the graph (random unit vectors, some repeated so scores tie
exactly, some chunks not live), in a scope of their own beside a second scope holding the
query's own vector. The statement must answer the oracle's top-k, ids and scores, and the
exact scan's answer; and answer no rows at all whenever the index did not give it every row.
"""

from __future__ import annotations

import math
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
from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Scope
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.services import Services
from tests.unit.principals import scope_ref

DIMS = 384
EXAMPLES = 30  # per run; run it over several ``--hypothesis-seed`` values for more
EPS = (DIMS + 8) * 2.0**-23  # the float32 score's bound (cypher/driver/cosine.py)
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
# The scan as it was: the float32 score alone, ties by id.
FLOAT32_TOP = """MATCH (c:Chunk {scope_key: $scope_key})
WITH c, vector.similarity.cosine(c.embedding, $vector) AS score
ORDER BY score DESC, c.id LIMIT $k
RETURN c.id AS id"""
# By label, so each read is an index seek (a label-less match scans the whole database).
ERASE = """CALL () {
  MATCH (n:Chunk {scope_key: $scope_key}) RETURN n
  UNION MATCH (n:Memory {scope_key: $scope_key}) RETURN n
  UNION MATCH (n:Entity {scope_key: $scope_key}) RETURN n
}
DETACH DELETE n"""
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


def near_ties(
    rng: np.random.Generator, m: np.ndarray, bits: int, near: int, scale: float
) -> np.ndarray:
    """``m`` with adversarial rows: ``bits`` copies of row 0 with a few elements moved by an
    ulp or two (they round to the same float32 vector), and ``near`` rows within ``scale`` of
    row 0 (float32 cannot tell their scores apart, or orders them wrongly)."""
    extra = []
    for _ in range(bits):
        v = m[0].copy()
        for j in rng.choice(DIMS, size=3, replace=False):
            toward = np.inf if rng.random() < 0.5 else -np.inf
            for _ in range(int(rng.integers(1, 3))):
                v[j] = np.nextafter(v[j], toward)
        extra.append(v)
    for _ in range(near):
        v = m[0] + rng.normal(size=DIMS) * scale
        extra.append(v / np.linalg.norm(v))
    return np.vstack([m, *[np.asarray([v]) for v in extra]]) if extra else m


def exact_score(e: list[float], q: list[float]) -> float:
    """The exact score (``cypher/driver/cosine.py``): ``(1 + x.q / sqrt(x.x q.q)) / 2`` in double
    precision, each sum left to right, as Neo4j computes it when it re-scores."""
    dot = xx = qq = 0.0
    for a, b in zip(e, q, strict=True):
        dot = dot + a * b
    for a in e:
        xx = xx + a * a
    for b in q:
        qq = qq + b * b
    return (1 + dot / math.sqrt(xx * qq)) / 2


def oracle(rows: list[dict[str, Any]], query: list[float], k: int) -> list[tuple[str, float]]:
    """Every row scored exactly, best first, ties by id; each score checked against numpy's
    float64 cosine, so the formula is the cosine."""
    scored = [(exact_score(r["embedding"], query), r["id"]) for r in rows]
    m, q = np.asarray([r["embedding"] for r in rows]), np.asarray(query)
    cos = (m @ q) / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
    assert [s for s, _ in scored] == pytest.approx(list((1 + cos) / 2), abs=1e-12)
    return [(i, s) for s, i in sorted(scored, key=lambda p: (-p[0], p[1]))[:k]]


def rows_of(m: np.ndarray, prefix: str, live: float) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}{i:04d}", "embedding": [float(x) for x in v], "live": i % 7 >= live}
        for i, v in enumerate(m)
    ]


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
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 120),
    repeats=st.integers(0, 5),
    bits=st.integers(0, 6),
    near=st.integers(0, 40),
    scale=st.sampled_from([1e-9, 1e-8, 3e-8, 1e-7, 3e-7, 1e-6]),
    close=st.booleans(),
    k=st.integers(1, 60),
    kind=st.sampled_from(sorted(KINDS, key=str)),
)
def test_the_whole_scope_from_the_index_is_the_oracles_top_k(
    neo4j_driver: Driver,
    keys: list[str],
    seed: int,
    n: int,
    repeats: int,
    bits: int,
    near: int,
    scale: float,
    close: bool,
    k: int,
    kind: Source,
) -> None:
    rng = np.random.default_rng(seed)
    mine, other = f"whole-{uuid.uuid4().hex}", f"whole-{uuid.uuid4().hex}"
    keys += [mine, other]
    m = near_ties(rng, unit_vectors(rng, n, min(repeats, n - 1)), bits, near, scale)
    # A query close to the near-ties puts them at the top, where the cut falls among them.
    qv = m[0] + rng.normal(size=DIMS) * 0.02 if close else rng.normal(size=DIMS)
    query = [float(x) for x in qv]
    rows = rows_of(m, mine + "-r", 1)
    with neo4j_driver.session() as session:
        session.run(WRITE[kind], scope_key=mine, rows=rows).consume()
        # Another scope holding the query's own vector: never part of this scope's answer.
        twin = rows_of(np.asarray([qv / np.linalg.norm(qv)] * 3), other + "-a", 0)
        session.run(WRITE[kind], scope_key=other, rows=twin).consume()
        session.run("CALL db.awaitIndexes(120)").consume()
    whole, exact = KINDS[kind]
    params = {**BASE, "scope_key": mine, "vector": query, "k": k}
    got = run(neo4j_driver, whole, {**params, "n": len(rows) + 16})
    want = oracle(rows, query, k)
    assert got["ids"] == [i for i, _ in want]
    assert got["scores"] == pytest.approx([s for _, s in want], abs=EPS)
    scanned = run(neo4j_driver, exact, params)
    assert (got["ids"], got["scores"]) == (scanned["ids"], scanned["scores"])
    assert got["live"] == scanned["live"]
    # Asked for fewer rows than the scope holds: the index's answer cannot be known whole, so
    # the statement answers nothing (and the leg scans), never a partial top-k.
    if len(rows) > 1:
        short = run(neo4j_driver, whole, {**params, "n": len(rows) - 1})
        assert short["ids"] == []


def test_float32_alone_misorders_what_the_rescore_orders(
    neo4j_driver: Driver, keys: list[str]
) -> None:
    """Rows a float32 step apart: ranked by the index's score alone they come out tied or
    swapped (the check that this data needs the re-score), both statements order them as the
    oracle does."""
    key = f"whole-{uuid.uuid4().hex}"
    keys.append(key)
    rng = np.random.default_rng(29)
    m = near_ties(rng, unit_vectors(rng, 40, 2), 4, 30, 1e-7)
    qv = m[0] + rng.normal(size=DIMS) * 0.02
    query = [float(x) for x in qv]
    rows = rows_of(m, key + "-r", 0)
    with neo4j_driver.session() as session:
        session.run(WRITE[Source.DOCUMENTS], scope_key=key, rows=rows).consume()
        session.run("CALL db.awaitIndexes(120)").consume()
        float32 = [r["id"] for r in session.run(FLOAT32_TOP, scope_key=key, vector=query, k=20)]
    want = [i for i, _ in oracle(rows, query, 20)]
    assert float32 != want
    params = {**BASE, "scope_key": key, "vector": query, "k": 20}
    assert run(neo4j_driver, wq.WHOLE_CHUNKS, {**params, "n": 100})["ids"] == want
    assert run(neo4j_driver, q.EXACT_CHUNKS, params)["ids"] == want


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

    # Passages are off (the default): the chunks' leg reads none.
    whole = await leg(90, 2000)
    assert set(seen) == {"WHOLE_CHUNKS"}  # over-fetched past the rows not live: whole
    seen.clear()
    scanned = await leg(0, 2000)  # statistics far behind: the index is asked for too few rows
    assert seen[:2] == ["WHOLE_CHUNKS", "EXACT_CHUNKS"]
    assert set(seen[2:]) <= {"EXACT_CHUNKS"}
    assert (whole.ids, whole.scores) == (scanned.ids, scanned.scores)
    want = oracle([r for r in rows if r["live"]], query, 20)
    assert whole.ids == [i for i, _ in want]
