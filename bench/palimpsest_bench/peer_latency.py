"""``bench peer-latency``: Palimpsest's ``search`` beside neo4j-graphrag's ``HybridRetriever``
on one scope, the same Neo4j and the same embedding model, queries interleaved.

The scope is one LoCoMo conversation (the 680-turn ``conv-43`` of the dev set by default, its
questions as the queries) or ``turns`` synthetic conversation turns (``TextGen``). Palimpsest
loads it through ``import_document`` into a fresh tenant, one document per session, one chunk
per turn; the peer gets the same turns, embedded by the same model, as nodes of a label of
the run's own (``PalimpsestBenchPeer_<run>``) with a vector and a full-text index of the run's
own names. The peer's nodes and indexes never touch the product's labels and are dropped
afterwards, as the tenant's documents are erased.

Per query, in alternating order: the peer's ``search`` (embedding the question, then its one
Cypher statement with two index calls: what a user of the library waits for), and
Palimpsest's ``search`` through GraphQL over HTTP (uvicorn in-process, a real run token,
one keep-alive connection, default sources, topK 10, selecting the fields the peer returns:
``id score text``). Also the stages the API observed (``recall_timing``). ``ratio_p50`` is
Palimpsest's p50 over the peer's; the pairs are interleaved so a busy machine slows both.
``statements_per_search``: the recall statements the API ran per ``search`` (each is one round
trip: reads run as auto-commit statements, RUN and PULL sent together), from its
``palimpsest_cypher_seconds`` counts (``SEARCH_STATEMENTS``: not the background loops').
With ``compare_one``, each query is also asked with the one-statement search off
(``resolvers/recall/one.py``, ``ENABLED``), in alternating order: ``palimpsest_without_one``
and ``ratio_one_p50`` (with over without).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neo4j import Driver, GraphDatabase
from neo4j_graphrag.embeddings.base import Embedder as PeerEmbedder
from neo4j_graphrag.retrievers import HybridRetriever
from neo4j_graphrag.types import RetrieverResultItem

from palimpsest.config import Settings
from palimpsest.cypher import (
    passages,
    recall,
    recall_one,
    recall_procedure,
    recall_text,
    recall_whole,
    terms,
)
from palimpsest.cypher.driver.executor import CYPHER_SECONDS, Statement
from palimpsest.embedding import Embedder
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.local.neo4j.manager import credentials
from palimpsest.resolvers.recall import one, timing
from palimpsest.runtime import open_services
from palimpsest.server import serve_in_thread
from palimpsest_bench import recall_ingest
from palimpsest_bench.recall_bench import TOP_K, Progress, latency_stats, stderr
from palimpsest_bench.recall_data import Dataset, Doc, Query, load_locomo, locomo_line
from palimpsest_bench.recall_latency import StageLog, stage_summary
from palimpsest_bench.recall_load import TextGen, cpu_steal_seconds, load_average, stolen_since
from palimpsest_bench.recall_summary import HEADLINE_CATEGORIES
from palimpsest_bench.sql import GraphQLClient

CONVERSATION = "conv-43"  # the dev set's 680-turn conversation
SYNTHETIC_OWNER = "peer"
TURNS_PER_SESSION = 40
EMBED_BATCH = 64
# What the peer returns per hit (its node's text and a score), asked of Palimpsest too.
SEARCH_GQL = (
    "query($q: String!, $k: Int!) { search(scope: USER, query: $q, topK: $k) "
    "{ hits { id score text } } }"
)


@dataclass(frozen=True, slots=True)
class Turn:
    unit: str
    text: str


def conversation(data: Path, sample: str = CONVERSATION) -> Dataset:
    """One LoCoMo conversation and its questions (categories 1-4: the headline ones)."""
    ds = load_locomo(data)
    docs = [d for d in ds.docs if d.owner == sample]
    if not docs:
        raise ValueError(f"no conversation {sample!r} in {data}")
    queries = [q for q in ds.queries if q.owner == sample and q.category in HEADLINE_CATEGORIES]
    return Dataset("locomo", docs, queries)


def synthetic(turns: int, queries: int) -> Dataset:
    """``turns`` synthetic conversation turns, ``TURNS_PER_SESSION`` to a session document."""
    gen = TextGen(f"peer-latency-{turns}")
    speakers = ("Avery", "Jordan")
    lines = [
        (f"t{i}", locomo_line(speakers[i % 2], gen.paragraph(gen.topic()))) for i in range(turns)
    ]
    docs = [
        Doc(
            owner=SYNTHETIC_OWNER,
            title=f"session {n // TURNS_PER_SESSION + 1}",
            observed_at=None,
            units=tuple(lines[n : n + TURNS_PER_SESSION]),
        )
        for n in range(0, turns, TURNS_PER_SESSION)
    ]
    asked = [Query(f"q{i}", SYNTHETIC_OWNER, gen.query(), frozenset()) for i in range(queries)]
    return Dataset("synthetic", docs, asked)


class SameModel(PeerEmbedder):
    """The peer's embedder: Palimpsest's own model, one question per call."""

    def __init__(self, model: Embedder) -> None:
        super().__init__()
        self.model = model

    def embed_query(self, text: str) -> list[float]:
        return list(self.model.embed([text])[0])


@dataclass(frozen=True, slots=True)
class Peer:
    """The peer's own label and indexes on the shared Neo4j, named for this run."""

    label: str
    vector_index: str
    fulltext_index: str

    @classmethod
    def new(cls) -> Peer:
        run = uuid.uuid4().hex[:12]
        return cls(
            f"PalimpsestBenchPeer_{run}",
            f"palimpsest_bench_peer_vector_{run}",
            f"palimpsest_bench_peer_fulltext_{run}",
        )

    def create(self, driver: Driver, turns: Sequence[Turn], model: Embedder, dims: int) -> None:
        # Names are the run's own generated identifiers, never input text.
        driver.execute_query(
            f"CREATE VECTOR INDEX {self.vector_index} FOR (n:{self.label}) ON n.embedding "
            "OPTIONS {indexConfig: {`vector.dimensions`: $dims, "
            "`vector.similarity_function`: 'cosine'}}",
            dims=dims,
        )
        driver.execute_query(
            f"CREATE FULLTEXT INDEX {self.fulltext_index} FOR (n:{self.label}) ON EACH [n.text]"
        )
        for start in range(0, len(turns), EMBED_BATCH):
            batch = turns[start : start + EMBED_BATCH]
            vectors = model.embed([t.text for t in batch])
            rows = [
                {"unit": t.unit, "text": t.text, "embedding": list(v)}
                for t, v in zip(batch, vectors, strict=True)
            ]
            driver.execute_query(f"UNWIND $rows AS r CREATE (n:{self.label}) SET n = r", rows=rows)
        driver.execute_query("CALL db.awaitIndexes(300)")

    def drop(self, driver: Driver) -> None:
        for index in (self.vector_index, self.fulltext_index):
            driver.execute_query(f"DROP INDEX {index} IF EXISTS")
        with driver.session() as session:  # IN TRANSACTIONS needs an implicit transaction
            session.run(
                f"MATCH (n:{self.label}) CALL (n) {{ DETACH DELETE n }} "
                "IN TRANSACTIONS OF 1000 ROWS"
            ).consume()


def turns_of(ds: Dataset) -> list[Turn]:
    return [Turn(unit, line) for d in ds.docs for unit, line in d.units]


def hit_rate(ranked: Sequence[Sequence[str]], queries: Sequence[Query]) -> float | None:
    """recall@10 as the LoCoMo harness counts it: any evidence turn in the top 10."""
    judged = [(r, q) for r, q in zip(ranked, queries, strict=True) if q.relevant]
    if not judged:
        return None
    found = sum(1 for r, q in judged if set(r[:TOP_K]) & q.relevant)
    return round(found / len(judged), 3)


async def run_peer(
    settings: Settings,
    data: Path | None,
    turns: int | None,
    queries: int = 200,
    warmup: int = 20,
    say: Progress = stderr,
    compare_one: bool = False,
) -> dict[str, Any]:
    """Load the scope both ways, time every query both ways interleaved, clean up."""
    settings = settings.replace(
        log_level="WARNING", rate_limit_per_second=0, embedding_cache_size=0
    )
    if turns is None:
        if data is None:
            raise ValueError("give the LoCoMo data folder or --turns")
        ds = conversation(data)
    else:
        ds = synthetic(turns, queries + warmup)
    owner = ds.docs[0].owner
    tenant = f"bench-peer-{uuid.uuid4().hex[:12]}"
    peer = Peer.new()
    async with open_services(settings) as svc:
        say(f"loading {sum(len(d.units) for d in ds.docs)} turns into {tenant} ...")
        loaded = await recall_ingest.ingest(svc, tenant, ds, say)
        driver = GraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
        try:
            say(f"loading the peer's {peer.label} and its indexes ...")
            await asyncio.to_thread(
                peer.create, driver, turns_of(ds), svc.embedder, svc.embedder.dimensions
            )
            retriever = HybridRetriever(
                driver,
                peer.vector_index,
                peer.fulltext_index,
                SameModel(svc.embedder),
                return_properties=["unit", "text"],
                result_formatter=_item,
                neo4j_database=settings.neo4j.database,
            )
            token = mint(
                load_keys(settings), tenant=tenant, user=owner, agent="bench", ttl_seconds=7200
            )
            figures = _interleaved(
                settings, retriever, token, ds, loaded, queries, warmup, say, compare_one
            )
        finally:
            say("dropping the peer's indexes and nodes, erasing the tenant's documents ...")
            try:
                await asyncio.to_thread(peer.drop, driver)
            finally:
                driver.close()
                await recall_ingest.erase(svc, tenant, loaded)
    return {
        "benchmark": "peer-latency",
        "dataset": ds.name,
        "turns": sum(len(d.units) for d in ds.docs),
        "conversation": owner if ds.name == "locomo" else None,
        "top_k": TOP_K,
        "peer": "neo4j-graphrag HybridRetriever",
        "search_fields": "id score text",
        **figures,
    }


def _interleaved(
    settings: Settings,
    retriever: HybridRetriever,
    token: str,
    ds: Dataset,
    loaded: recall_ingest.Loaded,
    queries: int,
    warmup: int,
    say: Progress,
    compare_one: bool = False,
) -> dict[str, Any]:
    asked = [ds.queries[i % len(ds.queries)] for i in range(warmup + queries)]
    without: list[float] = []
    ran: dict[bool, list[float]] = {True: [], False: []}  # statements per search, one on/off
    ours: list[float] = []
    theirs: list[float] = []
    stages: list[dict[str, float]] = []
    ranked_ours: list[list[str]] = []
    ranked_theirs: list[list[str]] = []
    log = StageLog()
    say("starting the API (Neo4j, embedding model) ...")
    with serve_in_thread(settings) as url, timing.listening(log):
        client = GraphQLClient(url, token)
        load_before = load_average()
        steal_before = cpu_steal_seconds()
        try:
            say(f"{warmup} warm-up and {queries} measured query pairs ...")
            for i, q in enumerate(asked):
                peer_first = i % 2 == 0  # neither always meets the warmer caches
                if peer_first:
                    peer_ms, peer_units = _peer_search(retriever, q.text)
                if compare_one and peer_first:
                    off_ms, off_ran = _ours(client, q.text, False)
                mark = len(log.samples)
                before = statements_run()
                t0 = time.perf_counter()
                data = client.call(SEARCH_GQL, q=q.text, k=TOP_K)
                our_ms = (time.perf_counter() - t0) * 1000
                on_ran = statements_run() - before
                seen = log.since(mark)
                if compare_one and not peer_first:
                    off_ms, off_ran = _ours(client, q.text, False)
                if not peer_first:
                    peer_ms, peer_units = _peer_search(retriever, q.text)
                if i < warmup:
                    continue
                ran[one.ENABLED].append(on_ran)
                if compare_one:
                    without.append(off_ms)
                    ran[False].append(off_ran)
                ours.append(our_ms)
                theirs.append(peer_ms)
                stages.append({**seen, "total": our_ms})
                hits = data["search"]["hits"]
                ranked_ours.append([loaded.unit_of_chunk.get(h["id"], "") for h in hits])
                ranked_theirs.append(peer_units)
        finally:
            client.close()
        load_after = load_average()
    judged = asked[warmup:]
    mine, peer = latency_stats(ours), latency_stats(theirs)
    compared: dict[str, Any] = {}
    if compare_one:
        off = latency_stats(without)
        compared = {
            "palimpsest_without_one": off,
            "ratio_one_p50": round(mine["p50"] / off["p50"], 3),
        }
    return {
        "queries": queries,
        "warmup": warmup,
        "palimpsest": {**mine, "recall@10": hit_rate(ranked_ours, judged)},
        "peer_figures": {**peer, "recall@10": hit_rate(ranked_theirs, judged)},
        "ratio_p50": round(mine["p50"] / peer["p50"], 3),
        "ratio_p95": round(mine["p95"] / peer["p95"], 3),
        **compared,
        "statements_per_search": {
            ("one" if on else "without_one"): round(sum(n) / len(n), 2)
            for on, n in ran.items()
            if n
        },
        "stages": stage_summary(stages),
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "cpu_steal_s": stolen_since(steal_before),
    }


def _search_statements() -> frozenset[str]:
    """The names of the statements a ``search`` may run: those of the recall modules and the
    term statistics' read (the API's background loops run others meanwhile)."""
    modules = (recall, recall_one, recall_procedure, recall_text, recall_whole, passages)
    names = {
        value.name
        for module in modules
        for value in vars(module).values()
        if isinstance(value, Statement)
    }
    return frozenset(names | {terms.READ_TERM_STATS.name})


SEARCH_STATEMENTS = _search_statements()


def statements_run() -> float:
    """How many of a search's statements the API in this process has run."""
    return sum(
        sample.value
        for metric in CYPHER_SECONDS.collect()
        for sample in metric.samples
        if sample.name.endswith("_count") and sample.labels["statement"] in SEARCH_STATEMENTS
    )


def _ours(client: GraphQLClient, text: str, enabled: bool) -> tuple[float, float]:
    """One ``search`` with the one-statement search on or off: its ms and statements run."""
    was, one.ENABLED = one.ENABLED, enabled
    try:
        before = statements_run()
        t0 = time.perf_counter()
        client.call(SEARCH_GQL, q=text, k=TOP_K)
        return (time.perf_counter() - t0) * 1000, statements_run() - before
    finally:
        one.ENABLED = was


def _peer_search(retriever: HybridRetriever, text: str) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    found = retriever.search(query_text=_lucene_safe(text), top_k=TOP_K)
    ms = (time.perf_counter() - t0) * 1000
    units = [str((item.metadata or {}).get("unit", "")) for item in found.items]
    return ms, units


def _item(record: Any) -> RetrieverResultItem:
    """A hit of the peer: its node's text, with the turn's unit id and the score aside."""
    node = record["node"]
    return RetrieverResultItem(
        content=node["text"], metadata={"unit": node["unit"], "score": record["score"]}
    )


_LUCENE_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')


def _lucene_safe(text: str) -> str:
    """The question with Lucene's query syntax escaped: the peer passes its text to Lucene's
    parser as it is, and a question mark or a colon would otherwise be syntax."""
    return "".join(f"\\{c}" if c in _LUCENE_SPECIAL else c for c in text)
