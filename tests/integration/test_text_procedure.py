"""The procedure engine's full-text legs (``palimpsest.textLeg``, our Neo4j extension) against
the Cypher engine's, on the real Neo4j with the extension installed.

Rows are written straight to the graph with their stored terms (``ft``, ``ft_tf``, ``ft_len``)
from a small vocabulary, so scores tie often, with the properties the row filters read (key
prefixes, expiry, validity, a chunk's version, a fact's creation), in a scope of their own
beside a second scope holding the same rows. For random rows, query terms, filters, pool sizes
and read plans, both engines must return the same pool, scores to the last bit, the same rows
dropped by the filters and the same cues; and the pool's scores are ``fulltext.Scorer``'s.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j import Driver, ManagedTransaction

from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.cypher.extension import CYPHER, Engine, SearchEngine
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import KindStats
from palimpsest.domain.ranking.fusion import Source
from palimpsest.errors import DatabaseFailure
from palimpsest.identity import Scope, ScopeRef
from palimpsest.local.neo4j import extension
from palimpsest.resolvers.notes import keyvalue as notes
from palimpsest.resolvers.recall import asks as recall_asks
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.recall import one as recall_one
from palimpsest.resolvers.recall import text as recall_text
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal, scope_ref

EXAMPLES = 25  # per run; run it over several ``--hypothesis-seed`` values for more
# "x²": a word to Python (and so a term), but not to Java's \w: the procedure must take it.
VOCABULARY = ["ash", "birch", "cedar", "elm", "fir", "hazel", "larch", "oak", "pine", "yew", "x²"]
NOW = datetime(2026, 6, 1, tzinfo=UTC)
WRITE = {
    Source.NOTES: """UNWIND $rows AS r
CREATE (:Memory {scope_key: $scope_key, key: r.id, ft: r.ft, ft_tf: r.tf, ft_len: r.len,
                 text: 't', created_at: datetime(), expires_at: r.expires_at,
                 valid_at: r.valid_at, invalid_at: r.invalid_at, observed_at: r.at})""",
    Source.DOCUMENTS: """UNWIND $rows AS r
CREATE (:Chunk {scope_key: $scope_key, id: r.id, ft: r.ft, ft_tf: r.tf, ft_len: r.len,
                text: 't', index: r.index, created_at: r.created_at, observed_at: r.at})""",
    Source.FACTS: """CREATE (s:Entity {scope_key: $scope_key, id: $scope_key + '-s'})
CREATE (o:Entity {scope_key: $scope_key, id: $scope_key + '-o'})
WITH s, o UNWIND $rows AS r
CREATE (s)-[:FACT {scope_key: $scope_key, id: r.id, ft: r.ft, ft_tf: r.tf, ft_len: r.len,
                   created_at: r.created_at, valid_at: r.valid_at, invalid_at: r.invalid_at,
                   observed_at: r.at}]->(o)""",
}
ERASE = """CALL () {
  MATCH (n:Chunk {scope_key: $scope_key}) RETURN n
  UNION MATCH (n:Memory {scope_key: $scope_key}) RETURN n
  UNION MATCH (n:Entity {scope_key: $scope_key}) RETURN n
  UNION MATCH (n:TermStats {scope_key: $scope_key}) RETURN n
}
DETACH DELETE n"""


@pytest.fixture(scope="module", autouse=True)
def the_extension_is_installed(neo4j_driver: Driver, svc: Services) -> None:
    """Fails (never skips) on a server without the extension of this version (``svc``: the
    services' start-up sets the schema up, the full-text indexes among it)."""
    records, _, _ = neo4j_driver.execute_query(
        "SHOW PROCEDURES YIELD name WHERE name = 'palimpsest.version' RETURN count(*) AS n"
    )
    assert records[0]["n"] == 1, (
        "the Neo4j under test lacks Palimpsest's extension: `palimpsest neo4j install`, "
        "then restart it"
    )
    records, _, _ = neo4j_driver.execute_query("CALL palimpsest.version() YIELD version")
    assert records[0]["version"] == extension.VERSION


@pytest.fixture
def refs(neo4j_driver: Driver) -> Iterator[list[ScopeRef]]:
    made: list[ScopeRef] = []
    yield made
    with neo4j_driver.session() as session:
        for ref in made:
            session.run(ERASE, scope_key=ref.scope_key).consume()


def _rows(rng: random.Random, n: int, ties: int, prefix: str) -> list[dict[str, Any]]:
    bags: list[Counter[str]] = []
    for _ in range(n):
        words = rng.sample(VOCABULARY, rng.randint(1, 5))
        bags.append(Counter({w: rng.randint(1, 4) for w in words}))
    bags += [bags[i % max(n, 1)] for i in range(ties if n else 0)]  # exact ties, broken by id
    rows = []
    for i, bag in enumerate(bags):
        stored = fulltext.Stored.of(bag)
        day = timedelta(days=rng.randint(-40, 40))
        rows.append(
            {
                "id": f"{rng.choice(['a/', 'b/'])}{prefix}{i:03d}",
                "ft": stored.ft,
                "tf": stored.tf,
                "len": stored.length + rng.randint(0, 6),  # other words the query lacks
                "expires_at": NOW + day if rng.random() < 0.2 else None,
                "valid_at": NOW + day if rng.random() < 0.3 else None,
                "invalid_at": NOW - day if rng.random() < 0.2 else None,
                "index": None if rng.random() < 0.15 else i,
                "created_at": NOW + day,
                "at": NOW - day,
                "bag": bag,
            }
        )
    return rows


def _stats(rows: list[dict[str, Any]]) -> KindStats:
    """The scope's statistics as the writes keep them: counts, lengths, each term's peaks."""
    df: Counter[str] = Counter()
    peaks: dict[str, tuple[int, float]] = {}
    for r in rows:
        for term, n in r["bag"].items():
            df[term] += 1
            tf, ratio = peaks.get(term, (0, 0.0))
            peaks[term] = (max(tf, n), max(ratio, n / r["len"]))
    return KindStats(len(rows), sum(r["len"] for r in rows), dict(df), peaks)


def _base(rng: random.Random) -> dict[str, Any]:
    known_at = NOW + timedelta(days=rng.randint(-30, 30)) if rng.random() < 0.3 else None
    return {
        "prefix": rng.choice(["", "", "a/"]),
        "now": NOW,
        "as_of": NOW + timedelta(days=rng.randint(-20, 20)),
        "known_at": known_at,
        "include_retired": rng.random() < 0.3,
        "include_refuted": True,
        "min_confidence": 0.0,
        "open_end": datetime(9999, 1, 1, tzinfo=UTC),
    }


class Seen(ScopedTx):
    """A scoped handle that notes the name of every statement it runs."""

    def __init__(self, tx: ScopedTx, names: list[str]) -> None:
        super().__init__(tx.run, tx.ref)  # never called: ``run`` goes to ``tx`` itself
        self.tx, self.names = tx, names

    async def run(self, statement: Statement, params: Mapping[str, Any] | None = None) -> list[Row]:
        self.names.append(statement.name)
        return await self.tx.run(statement, params)


def _both(
    tx: ManagedTransaction, ref: ScopeRef, run: dict[str, Any]
) -> tuple[legs.Ranked, legs.Ranked, list[str]]:
    """Both engines' answers in one read transaction (the procedure runs in the caller's)."""

    async def raw(statement: Statement, params: dict[str, Any]) -> list[Row]:
        return [dict(r) for r in tx.run(statement.text, params)]

    async def leg(engine: Engine, names: list[str]) -> legs.Ranked:
        return await legs.fulltext_leg(Seen(ScopedTx(raw, ref), names), engine=engine, **run)

    names: list[str] = []
    cypher = asyncio.run(leg("cypher", []))
    procedure = asyncio.run(leg("procedure", names))
    return cypher, procedure, names


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 90),
    ties=st.integers(0, 12),
    kind=st.sampled_from([Source.NOTES, Source.DOCUMENTS, Source.FACTS]),
    pool=st.integers(1, 40),
    cover_min_rows=st.sampled_from([0, 10**9]),
    spare_rows=st.sampled_from([0, 200]),
    query=st.lists(st.sampled_from([*VOCABULARY, "absent"]), min_size=1, max_size=6),
)
def test_the_procedures_pool_is_the_cypher_legs(
    neo4j_driver: Driver,
    refs: list[ScopeRef],
    seed: int,
    n: int,
    ties: int,
    kind: Source,
    pool: int,
    cover_min_rows: int,
    spare_rows: int,
    query: list[str],
) -> None:
    rng = random.Random(seed)
    tenant = f"proc-{uuid.uuid4().hex[:12]}"
    ref, other = scope_ref(tenant, Scope.USER, "alice"), scope_ref(tenant, Scope.USER, "bob")
    refs += [ref, other]
    rows = _rows(rng, n, ties, ref.scope_key[:12] + "-")
    wire = [{k: v for k, v in r.items() if k != "bag"} for r in rows]
    with neo4j_driver.session() as session:
        session.run(WRITE[kind], scope_key=ref.scope_key, rows=wire).consume()
        # The same rows in another scope: they would tie and outrank, were they read.
        twins = [{**r, "id": "z/" + r["id"]} for r in wire]
        session.run(WRITE[kind], scope_key=other.scope_key, rows=twins).consume()
    terms = list(dict.fromkeys(query))
    stats = _stats(rows)
    k1, b = 1.2, 0.75
    run = {
        "source": kind,
        "terms": terms,
        "stats": stats,
        "pool": pool,
        "base": _base(rng),
        "k1": k1,
        "b": b,
        "cover_min_rows": cover_min_rows,
        "spare_rows": spare_rows,
    }
    with neo4j_driver.session() as session:
        cypher, procedure, names = session.execute_read(_both, ref, run)
    assert procedure.ids == cypher.ids
    assert procedure.scores == cypher.scores  # floats compared exactly: the same bits
    assert procedure.dropped == cypher.dropped
    assert procedure.cues == cypher.cues
    assert not [i for i in procedure.ids if i.startswith("z/")]
    assert set(names) <= {legs.PROCEDURE_TERMS[kind].name, legs.LEGS[kind].cues.name}
    if any(stats.df.get(t, 0) for t in terms):
        assert legs.PROCEDURE_TERMS[kind].name in names
    scorer = fulltext.Scorer.of(terms, stats, k1, b)
    by_id = {r["id"]: r for r in rows}
    for i in procedure.ids:
        r = by_id[i]
        assert procedure.scores[i] == scorer.score(r["ft"], r["tf"], r["len"])


async def test_the_server_searches_on_the_procedure_and_answers_as_on_cypher(
    svc: Services, ran: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The services chose the procedure at start-up (the server has the extension); a search
    is one statement (``SEARCH_ONE``), and answers the same hits, scores and explanations as
    the procedure's own legs and, hits and scores, as the Cypher engine; only the chosen
    engine's full-text statements run. (A scope this small has its few rows read with the
    statistics, ``recall_text``: that is off here, so the legs read as on a big scope.)"""
    monkeypatch.setattr(recall_text, "HELD_MAX_ROWS", 0)
    assert svc.search_engine == SearchEngine("procedure", f"extension {extension.VERSION}")
    who = principal(tenant_id=f"proc-{uuid.uuid4().hex[:12]}")
    rng = random.Random(43)
    for i in range(60):
        text = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(3, 12)))
        await notes.set_value(svc, who, Scope.USER, f"n/{i:02d}", text, None, True, None)
    on_cypher = dataclasses.replace(svc, search_engine=CYPHER)
    for query in ["oak and pine", "larch", "yew birch cedar elm", "hazel ash fir"]:
        ask = recall_asks.Ask(query=query, top_k=15)
        ran.clear()
        one = await recall_asks.search(svc, who, ask)
        assert ran == ["SEARCH_ONE"]  # a search of one scope in one statement (recall/one.py)
        ran.clear()
        monkeypatch.setattr(recall_one, "ENABLED", False)
        procedure = await recall_asks.search(svc, who, ask)
        monkeypatch.setattr(recall_one, "ENABLED", True)
        assert "PROC_TERMS_MEMORY" in ran
        assert "TERMS_MEMORY" not in ran
        assert [(h.id, h.score) for h in one.hits] == [(h.id, h.score) for h in procedure.hits]
        assert [h.explain for h in one.hits] == [h.explain for h in procedure.hits]
        ran.clear()
        cypher = await recall_asks.search(on_cypher, who, ask)
        assert "TERMS_MEMORY" in ran
        assert not [n for n in ran if n.startswith("PROC_")]
        assert procedure.hits, query
        ranked_by_text = [h for h in procedure.hits if h.fulltext_rank is not None]
        assert ranked_by_text, query
        assert {h.explain.text_engine for h in ranked_by_text if h.explain} == {"procedure"}
        assert {h.explain.text_engine for h in cypher.hits if h.fulltext_rank and h.explain} == {
            "cypher"
        }
        unranked = [h.explain for h in procedure.hits if h.fulltext_rank is None]
        assert {e.text_engine for e in unranked if e is not None} <= {None}
        assert [(h.id, h.score) for h in procedure.hits] == [(h.id, h.score) for h in cypher.hits]


def test_readyz_names_the_engine_that_answers(http: httpx.Client) -> None:
    ready = http.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["searchEngine"] == {
        "engine": "procedure",
        "reason": f"extension {extension.VERSION}",
    }


async def test_a_procedure_failure_is_the_error_trees_with_the_drivers_code(
    svc: Services,
) -> None:
    """Input the caller would refuse (``recall_text.Procedure.params``) sent all the same: the
    procedure refuses it too, and the executor answers a coded error, not an untyped one."""
    ref = scope_ref(f"proc-{uuid.uuid4().hex[:12]}", Scope.USER, "alice")
    bad = {
        "kind": "memory",
        "sets": [['oak") OR scope_key:(*']],
        "unless": [],
        "terms": ["oak"],
        "weights": [1.0],
        "k1": 1.2,
        "b": 0.75,
        "avg_length": 5.0,
        "top": 10,
        **_base(random.Random(1)),
    }
    with pytest.raises(DatabaseFailure) as failed:
        await svc.db.scoped(ref).read(legs.PROCEDURE_TERMS[Source.NOTES], bad)
    assert failed.value.details == {"driverCode": "Neo.ClientError.Procedure.ProcedureCallFailed"}
    assert "scope_key" not in failed.value.message


# The scope's statistics as ``:TermStats`` (one shard), for the one statement to read.
WRITE_STATS = """UNWIND $stats AS s
CREATE (:TermStats {scope_key: $scope_key, kind: $kind, term: s.term, shard: 0, df: s.df,
                    len: s.len, max_tf: s.max_tf, max_ratio: s.max_ratio, bounded: true})"""


def _stat_rows(stats: KindStats) -> list[dict[str, Any]]:
    rows = [{"term": "", "df": stats.rows, "len": stats.length, "max_tf": 0, "max_ratio": 0.0}]
    for term, df in stats.df.items():
        tf, ratio = stats.peaks[term]
        rows.append({"term": term, "df": df, "len": 0, "max_tf": tf, "max_ratio": ratio})
    return rows


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 90),
    ties=st.integers(0, 12),
    kind=st.sampled_from([Source.NOTES, Source.DOCUMENTS, Source.FACTS]),
    pool=st.integers(1, 40),
    query=st.lists(st.sampled_from([*VOCABULARY, "absent"]), min_size=1, max_size=6),
    one_max_rows=st.sampled_from([0, 20_000]),
)
def test_the_one_statements_pool_is_the_cypher_legs(
    neo4j_driver: Driver,
    refs: list[ScopeRef],
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    n: int,
    ties: int,
    kind: Source,
    pool: int,
    query: list[str],
    one_max_rows: int,
) -> None:
    """The one statement (``recall_one.SEARCH_ONE``) reads the scope's ``:TermStats`` and the
    leg through the procedure, weighted by Cypher's idf; the resolver's rescored pool
    (``recall/one.text_leg``) is the Cypher leg's, scores to the bit, or None only where the
    procedure cut its answer (then the leg reads as before). Another scope's twins of every
    row, and their statistics, never come back."""
    monkeypatch.setattr(recall_one, "ONE_MAX_ROWS", one_max_rows)
    rng = random.Random(seed)
    tenant = f"one-{uuid.uuid4().hex[:12]}"
    ref, other = scope_ref(tenant, Scope.USER, "alice"), scope_ref(tenant, Scope.USER, "bob")
    refs += [ref, other]
    rows = _rows(rng, n, ties, ref.scope_key[:12] + "-")
    wire = [{k: v for k, v in r.items() if k != "bag"} for r in rows]
    stats = _stats(rows)
    label = legs.KIND[kind]
    with neo4j_driver.session() as session:
        session.run(WRITE[kind], scope_key=ref.scope_key, rows=wire).consume()
        twins = [{**r, "id": "z/" + r["id"]} for r in wire]
        session.run(WRITE[kind], scope_key=other.scope_key, rows=twins).consume()
        for key in (ref.scope_key, other.scope_key):
            session.run(WRITE_STATS, scope_key=key, kind=label, stats=_stat_rows(stats)).consume()
    terms = list(dict.fromkeys(query))
    base, k1, b = _base(rng), 1.2, 0.75

    def both(tx: ManagedTransaction) -> tuple[legs.Ranked, recall_one.Answer]:
        async def raw(statement: Statement, params: dict[str, Any]) -> list[Row]:
            return [dict(r) for r in tx.run(statement.text, params)]

        scoped = ScopedTx(raw, ref)
        leg = legs.fulltext_leg(scoped, kind, terms, stats, pool, base, k1, b, engine="cypher")
        cypher = asyncio.run(leg)
        answer = asyncio.run(
            recall_one.read(scoped, [kind], terms, False, base, None, pool, k1, b, 2000, 100)
        )
        return cypher, answer

    with neo4j_driver.session() as session:
        cypher, answer = session.execute_read(both)
    read = answer.stats.of(kind)
    asked = {t: df for t, df in stats.df.items() if t in terms}
    assert (read.rows, read.length, dict(read.df)) == (stats.rows, stats.length, asked)
    found = answer.text.get(kind)
    held = sum(stats.df.get(t, 0) for t in terms)
    if held == 0 or held > one_max_rows:
        assert found is None  # not read here: the leg reads as before
        return
    assert found is not None
    assert not [i for i in found["ids"] if i.startswith("z/")]
    one = recall_one.text_leg(found, terms, read, pool, k1, b)
    if one is None:  # the procedure's answer was cut: the leg must read as before
        assert len(found["ids"]) < found["matched"]
        return
    assert one.ids == cypher.ids
    assert one.scores == cypher.scores  # floats compared exactly: the same bits
    assert one.dropped == cypher.dropped
    assert one.cues == cypher.cues
