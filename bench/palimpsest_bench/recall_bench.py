"""Recall benchmarks (issue 4, item 5): scoped latency, filtered-recall quality, ingest rate.

All three write synthetic Markdown documents through ``import_document`` (the resolver the
``importDocument`` mutation calls: parse, embed every chunk in one batch, one write
transaction) into bench tenants of the configured Neo4j, and print one JSON-ready dict.
Texts come from a fixed vocabulary (topics, names, places, years), so both the vector and the
full-text leg have signal; no evaluation data is read.

- ``recall-latency``: N chunks over many USER scopes in four tenants (one big scope with a
  fifth of the rows, several hundred small ones). The dataset is kept between runs: tenants
  ``bench-recall-<N>-t<i>``; a run whose scopes all hold their planned chunk counts skips the
  load (``dataset.cached``), a scope left half-loaded is erased and loaded again. Then, per
  query, interleaved: ``search`` through GraphQL over HTTP (uvicorn in-process on a free port,
  a real run token, one keep-alive connection, one request at a time; default sources, topK
  10, so the query embedding and every leg the resolver plans are included), and the raw
  work: embed the query, then the same ``cypher/recall.py`` statements the planner runs for
  that request (vector leg with the exact fallback on a short read, full-text leg, per kind,
  concurrently, as the resolver does) through ``Database.read``. ``overhead`` is
  p95 / raw_p95: what HTTP, GraphQL, the resolvers and fusion add.
- ``filtered-recall``: tenant ``bench-filtered-<N>`` (kept too) with USER scopes of exactly
  0.01 %, 0.1 %, 1 %, 10 % and 100 % of N chunks. For each scope and query, top-10 ids of the
  production vector leg (``recall`` in vector mode, the code the API runs) against an exact
  in-scope search (``EXACT_CHUNKS``, brute-force cosine over the scope); also the production
  hybrid top-10 against RRF of the exact vector pool and the full-text pool, and the bare
  in-index ANN (``VECTOR_CHUNKS`` alone, no fallback) to show what the fallback adds.
  ``share_of_index`` is each scope's share of all embedded chunks in the database, which
  includes other tenants' rows.
- ``ingest``: a fresh tenant (erased afterwards); per document, interleaved so both see the
  same machine: embedding only (``Services.embed`` on the document's chunk texts, the batch
  ``import_document`` makes) and the full ``import_document``. ``ratio`` =
  chunks_per_s / embed_only_per_s.

Only the pure helpers (percentiles, overlap, plans, text generation) are unit tested; figures
are measured, never asserted.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio.to_thread

from palimpsest import fulltext, markdown
from palimpsest import recall as pure
from palimpsest.config import Settings
from palimpsest.cypher import recall as q
from palimpsest.cypher.executor import ScopedTx, Statement
from palimpsest.identity import Scope, ScopeRef, resolve_scope
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.resolvers import document_import as importer
from palimpsest.resolvers import facts as fr
from palimpsest.resolvers import recall as rr
from palimpsest.resolvers import recall_legs as legs
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest.server import serve_in_thread
from palimpsest_bench.common import HashEmbedder, gather_limited, principal
from palimpsest_bench.sql import GraphQLClient

Progress = Callable[[str], None]


def stderr(message: str) -> None:
    print(message, file=sys.stderr)


TOP_K = 10
BULK_DOCS = 20  # documents per import_documents call in the ingest benchmark
# The resolver's default pool for topK 10, and what its approximate search is asked for.
POOL = min(2 * TOP_K, rr.MAX_POOL)
ANN_ASK = max(POOL, rr.ANN_FLOOR)
SHARES = (0.01, 0.1, 1.0, 10.0, 100.0)  # percent of N
LATENCY_TENANTS = 4
BIG_SHARE = 0.2
SMALL_MIN, SMALL_MAX = 10, 500
MAX_DOC_CHUNKS = 25
LOAD_CONCURRENCY = 2
AGENT = "bench"

SEARCH_GQL = (
    "query($scope: Scope!, $q: String!, $k: Int!) { search(scope: $scope, query: $q, topK: $k) "
    "{ hits { kind id score cosine vectorRank fulltextRank text documentId } } }"
)

# Bench-only statements: the product has no "erase a scope's documents" or "count a scope".
# The two counts read across scopes on purpose (sizes only, never content): declared unscoped.
COUNT_SCOPES = Statement(
    "BENCH_COUNT_SCOPES",
    """
UNWIND $keys AS key
RETURN key, COUNT { MATCH (c:Chunk {scope_key: key}) WHERE c.index IS NOT NULL } AS n
""",
    scoped=False,
)
COUNT_EMBEDDED = Statement(
    "BENCH_COUNT_EMBEDDED",
    "MATCH (c:Chunk) WHERE c.index IS NOT NULL RETURN count(c) AS n",
    scoped=False,
)
ERASE_CHUNKS = Statement(
    "BENCH_ERASE_CHUNKS",
    """
MATCH (c:Chunk {scope_key: $scope_key})
WITH c LIMIT 5000
DETACH DELETE c
RETURN count(*) AS deleted
""",
)
ERASE_DOCUMENTS = Statement(
    "BENCH_ERASE_DOCUMENTS",
    """
MATCH (d:Document {scope_key: $scope_key})
WITH d LIMIT 5000
DETACH DELETE d
RETURN count(*) AS deleted
""",
)


# -- pure helpers -------------------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation between ranks (numpy's default)."""
    if not values:
        raise ValueError("no values")
    if not 0 <= pct <= 100:
        raise ValueError("pct must be within 0-100")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * pct / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def overlap(found: Sequence[str], exact: Sequence[str], k: int = TOP_K) -> float:
    """Share of the exact top-k that the search found in its own top-k; 1.0 when both are empty.

    The denominator is the exact list's length (a scope smaller than k has fewer true hits).
    """
    truth = list(dict.fromkeys(exact[:k]))
    if not truth:
        return 1.0 if not found else 0.0
    return len(set(found[:k]) & set(truth)) / len(truth)


def latency_stats(ms: Sequence[float], prefix: str = "") -> dict[str, float]:
    return {
        f"{prefix}p50": round(percentile(ms, 50), 2),
        f"{prefix}p95": round(percentile(ms, 95), 2),
        f"{prefix}p99": round(percentile(ms, 99), 2),
        f"{prefix}mean": round(sum(ms) / len(ms), 2),
    }


@dataclass(frozen=True, slots=True)
class ScopePlan:
    tenant: str
    user: str
    chunks: int
    big: bool = False

    @property
    def ref(self) -> ScopeRef:
        return resolve_scope(principal(self.tenant, self.user, AGENT), Scope.USER)

    @property
    def key(self) -> str:
        return self.ref.scope_key


def latency_plan(n: int, synthetic: bool = False) -> list[ScopePlan]:
    """One big scope (a fifth of ``n``) and many small ones (10-500, log-uniform) over four
    tenants; the sizes add up to ``n`` exactly and depend only on ``n``. Synthetic-vector
    datasets live in tenants of their own."""
    if n < 1:
        raise ValueError("n must be positive")
    name = f"bench-recall-synth-{n}" if synthetic else f"bench-recall-{n}"
    tenants = [f"{name}-t{i}" for i in range(LATENCY_TENANTS)]
    big = max(1, round(n * BIG_SHARE))
    plans = [ScopePlan(tenants[0], "big", big, big=True)]
    rng = random.Random(f"latency-plan-{n}")
    left = n - big
    i = 0
    while left > 0:
        size = min(left, round(math.exp(rng.uniform(math.log(SMALL_MIN), math.log(SMALL_MAX)))))
        plans.append(ScopePlan(tenants[i % LATENCY_TENANTS], f"u{i:05d}", size))
        left -= size
        i += 1
    return plans


def filtered_plan(n: int) -> list[ScopePlan]:
    """Scopes holding exactly 0.01 %, 0.1 %, 1 %, 10 % and 100 % of ``n`` (at least one row)."""
    if n < 1:
        raise ValueError("n must be positive")
    tenant = f"bench-filtered-{n}"
    return [ScopePlan(tenant, f"share-{s:g}", max(1, round(n * s / 100))) for s in SHARES]


_TOPICS: dict[str, tuple[str, ...]] = {
    "shipping": ("harbor", "cargo", "manifest", "container", "dock", "freighter", "crane"),
    "baking": ("sourdough", "oven", "flour", "starter", "crust", "dough", "yeast"),
    "astronomy": ("telescope", "nebula", "comet", "orbit", "eclipse", "galaxy", "meteor"),
    "gardening": ("tomato", "compost", "seedling", "greenhouse", "mulch", "orchard", "soil"),
    "finance": ("invoice", "budget", "ledger", "dividend", "audit", "mortgage", "payroll"),
    "medicine": ("vaccine", "clinic", "symptom", "dosage", "surgeon", "diagnosis", "fever"),
    "music": ("violin", "chorus", "melody", "rehearsal", "concert", "drummer", "album"),
    "hiking": ("trail", "summit", "backpack", "glacier", "campsite", "ridge", "compass"),
    "software": ("compiler", "database", "deployment", "bug", "server", "library", "query"),
    "cooking": ("risotto", "saffron", "skillet", "marinade", "broth", "garlic", "noodle"),
    "football": ("striker", "goalkeeper", "penalty", "stadium", "league", "referee", "coach"),
    "weather": ("storm", "drought", "forecast", "hail", "monsoon", "humidity", "blizzard"),
    "travel": ("passport", "airport", "hostel", "itinerary", "ferry", "luggage", "visa"),
    "chemistry": ("catalyst", "molecule", "solvent", "isotope", "reaction", "polymer", "acid"),
    "history": ("empire", "treaty", "dynasty", "archive", "revolution", "monarch", "siege"),
    "pets": ("puppy", "kitten", "veterinarian", "leash", "aquarium", "parrot", "hamster"),
    "architecture": ("facade", "cathedral", "blueprint", "balcony", "staircase", "dome", "arch"),
    "energy": ("turbine", "battery", "solar", "reactor", "pipeline", "grid", "hydrogen"),
    "education": ("syllabus", "lecture", "semester", "thesis", "tutor", "exam", "campus"),
    "fashion": ("jacket", "silk", "tailor", "runway", "denim", "sneaker", "scarf"),
}
_VERBS = (
    "reviewed", "repaired", "measured", "described", "ordered", "cancelled", "compared",
    "photographed", "recommended", "questioned", "delivered", "painted", "borrowed", "sold",
    "inspected", "forgot", "mentioned", "planned", "tested", "cleaned",
)  # fmt: skip
_ADJECTIVES = (
    "old", "broken", "quarterly", "bright", "heavy", "expensive", "quiet", "northern",
    "wooden", "urgent", "tiny", "famous", "rusty", "fresh", "secret", "crowded", "blue",
    "early", "late", "remote",
)  # fmt: skip
_NAMES = (
    "Maria", "Jonas", "Aiko", "Tomasz", "Fatima", "Lucas", "Priya", "Olusegun", "Elena",
    "Mateo", "Sven", "Chloe", "Ravi", "Hana", "Diego", "Ingrid", "Kofi", "Yusuf", "Lena",
    "Bruno",
)  # fmt: skip
_PLACES = (
    "Lisbon", "Osaka", "Nairobi", "Quebec", "Bergen", "Tucson", "Krakow", "Valparaiso",
    "Hobart", "Tallinn", "Marrakesh", "Cork", "Busan", "Lyon", "Recife", "Dundee",
)  # fmt: skip
_PREPOSITIONS = ("near", "behind", "beside", "after", "before", "under", "inside", "for")
_TOPIC_NAMES = tuple(sorted(_TOPICS))


class TextGen:
    """Deterministic synthetic text: 1-2 sentence paragraphs and short queries, by topic."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def topic(self) -> str:
        return self.rng.choice(_TOPIC_NAMES)

    def sentence(self, topic: str) -> str:
        r = self.rng
        words = _TOPICS[topic]
        subject = r.choice(_NAMES)
        noun, other = r.sample(words, 2)
        text = (
            f"{subject} {r.choice(_VERBS)} the {r.choice(_ADJECTIVES)} {noun} "
            f"{r.choice(_PREPOSITIONS)} the {other}"
        )
        if r.random() < 0.5:
            text += f" in {r.choice(_PLACES)}"
        if r.random() < 0.4:
            text += f" in {r.randint(1990, 2025)}"
        return text + "."

    def paragraph(self, topic: str) -> str:
        count = 1 if self.rng.random() < 0.5 else 2
        return " ".join(self.sentence(topic) for _ in range(count))

    def document(self, chunks: int, serial: int) -> str:
        """A Markdown document that parses into exactly ``chunks`` chunks: a heading, then
        paragraphs and an occasional bulleted list (each item is a chunk)."""
        if chunks < 1:
            raise ValueError("a document has at least one chunk")
        topic = self.topic()
        if chunks == 1:
            return self.paragraph(topic) + "\n"
        words = _TOPICS[topic]
        parts = [f"# {self.rng.choice(words).title()} notes {serial}"]
        left = chunks - 1
        while left > 0:
            if self.rng.random() < 0.25:  # the topic drifts within a document
                topic = self.topic()
            if left >= 2 and self.rng.random() < 0.15:
                items = min(left, self.rng.randint(2, 4))
                parts.append("\n".join(f"- {self.sentence(topic)}" for _ in range(items)))
                left -= items
            else:
                parts.append(self.paragraph(topic))
                left -= 1
        return "\n\n".join(parts) + "\n"

    def query(self) -> str:
        r = self.rng
        topic = self.topic()
        noun, other = r.sample(_TOPICS[topic], 2)
        match r.randrange(4):
            case 0:
                return f"{r.choice(_ADJECTIVES)} {noun} {other}"
            case 1:
                return f"what did {r.choice(_NAMES)} say about the {noun}"
            case 2:
                return f"{noun} {r.choice(_PREPOSITIONS)} the {other} in {r.choice(_PLACES)}"
            case _:
                return f"who {r.choice(_VERBS)} the {noun}"


def documents_for(plan: ScopePlan) -> Iterator[tuple[str, int]]:
    """The scope's documents as (markdown, chunk count); the counts add up to ``plan.chunks``."""
    gen = TextGen(f"{plan.tenant}/{plan.user}")
    left, serial = plan.chunks, 0
    while left > 0:
        size = min(left, gen.rng.randint(MAX_DOC_CHUNKS // 2, MAX_DOC_CHUNKS))
        yield gen.document(size, serial), size
        left -= size
        serial += 1


# -- loading ------------------------------------------------------------------------------


async def erase_scope(svc: Services, ref: ScopeRef) -> None:
    for statement in (ERASE_CHUNKS, ERASE_DOCUMENTS):
        while (await svc.db.scoped(ref).write(statement))[0]["deleted"]:
            pass


async def ensure_loaded(svc: Services, plans: Sequence[ScopePlan], say: Progress) -> dict[str, Any]:
    """Load every scope whose chunk count is not the planned one (erasing a partial load)."""
    rows = await svc.db.read(COUNT_SCOPES, {"keys": [p.key for p in plans]})
    have = {r["key"]: int(r["n"]) for r in rows}
    todo = [p for p in plans if have.get(p.key, 0) != p.chunks]
    total = sum(p.chunks for p in plans)
    if not todo:
        say(f"dataset present: {total} chunks in {len(plans)} scopes (cached, not reloaded)")
        return {"cached": True, "chunks": total, "scopes": len(plans), "load_seconds": 0.0}
    for p in todo:
        if have.get(p.key, 0):
            say(f"  scope {p.tenant}/{p.user} is partial ({have[p.key]}/{p.chunks}); erasing")
            await erase_scope(svc, p.ref)
    pending = sum(p.chunks for p in todo)
    say(f"loading {pending} of {total} chunks into {len(todo)} scopes via import_document ...")
    started = time.perf_counter()
    done = 0
    last = started

    def job(p: ScopePlan, text: str, size: int, serial: int) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            nonlocal done, last
            who = principal(p.tenant, p.user, AGENT)
            await importer.import_document(
                svc, who, Scope.USER, text, None, f"/bench/{serial}.md", None
            )
            done += size
            now = time.perf_counter()
            if now - last >= 10 or done == pending:
                last = now
                rate = done / (now - started)
                eta = (pending - done) / max(rate, 1e-9)
                say(f"  loaded {done}/{pending} chunks ({rate:.0f}/s, ~{eta:.0f}s left)")

        return run

    jobs = [
        job(p, text, size, serial)
        for p in todo
        for serial, (text, size) in enumerate(documents_for(p))
    ]
    await gather_limited(jobs, LOAD_CONCURRENCY)
    seconds = time.perf_counter() - started
    return {
        "cached": False,
        "chunks": total,
        "scopes": len(plans),
        "loaded_chunks": pending,
        "load_seconds": round(seconds, 1),
        "load_chunks_per_s": round(pending / seconds, 1),
    }


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# -- (a) recall latency -------------------------------------------------------------------


async def raw_search(
    svc: Services, ref: ScopeRef, query: str, sources: frozenset[pure.Source]
) -> int:
    """The work of one ``search`` without the API: the scope's term statistics, the query
    embedding, then every leg the planner runs for it (per kind: the vector leg, exact for
    small scopes or with the exact fallback on a short read; the scope-local BM25 leg),
    concurrently. No fusion, no boosts, no final load. Returns the rows ranked."""
    levers = pure.Levers.of(svc.settings)
    kinds = sorted(sources)
    terms = fulltext.query_terms(query, levers.question_words)
    db = svc.db.scoped(ref)
    stats = await db.read_tx(lambda tx: legs.read_stats(tx, kinds, terms, True))
    [vector] = await svc.embed([query])
    base: dict[str, Any] = {
        "prefix": "",
        "now": svc.clock(),
        **fr.time_view(svc, None, None).params(),
    }

    async def vector_leg(kind: pure.Source) -> int:
        rows = stats.of(kind).rows
        ranked = await db.read_tx(
            lambda tx: legs.vector_leg(
                tx, kind, list(vector), POOL, base, rows, levers.exact_max_rows
            )
        )
        return len(ranked.ids)

    async def text_leg(kind: pure.Source) -> int:
        st = stats.of(kind)
        if not terms or st.rows == 0:
            return 0
        ranked = await db.read_tx(
            lambda tx: legs.fulltext_leg(tx, kind, terms, st, POOL, base, levers.k1, levers.b)
        )
        return len(ranked.ids)

    jobs: list[Awaitable[int]] = []
    for kind in kinds:
        jobs += [vector_leg(kind), text_leg(kind)]
    return sum(await asyncio.gather(*jobs))


async def _timed_raw(
    svc: Services, ref: ScopeRef, query: str, sources: frozenset[pure.Source]
) -> float:
    started = time.perf_counter()
    await raw_search(svc, ref, query, sources)
    return (time.perf_counter() - started) * 1000


async def run_latency(
    settings: Settings,
    n: int = 10_000,
    queries: int = 300,
    warmup: int = 30,
    say: Progress = stderr,
    synthetic: bool = False,
) -> dict[str, Any]:
    settings = settings.model_copy(update={"log_level": "WARNING"})
    plans = latency_plan(n, synthetic)
    big = [p for p in plans if p.big]
    small = [p for p in plans if not p.big]
    async with open_services(settings) as svc:
        loader = (
            replace(svc, embedder=HashEmbedder(svc.embedder.model_name, svc.embedder.dimensions))
            if synthetic
            else svc
        )
        dataset = await ensure_loaded(loader, plans, say)
        dataset["synthetic_vectors"] = synthetic
        index_rows = (await svc.db.read(COUNT_EMBEDDED))[0]["n"]
        keys = load_keys(settings)
        tokens = {
            p.key: mint(keys, tenant=p.tenant, user=p.user, agent=AGENT, ttl_seconds=7200)
            for p in plans
        }
        gen = TextGen(f"latency-queries-{n}")
        picks = [
            (big[0] if i % 2 == 0 else gen.rng.choice(small) if small else big[0], gen.query())
            for i in range(warmup + queries)
        ]
        sources = pure.SEARCH_DEFAULT
        say("starting the API (Neo4j, embedding model) ...")
        load_before = _load()
        gql: dict[str, list[float]] = {"big": [], "small": []}
        raw: dict[str, list[float]] = {"big": [], "small": []}
        with serve_in_thread(settings) as url:
            client = GraphQLClient(url, tokens[big[0].key])
            try:
                say(f"{warmup} warm-up and {queries} measured queries (GraphQL, then raw) ...")
                for i, (p, text) in enumerate(picks):
                    # One keep-alive connection; each request carries its scope's own token.
                    client.headers["Authorization"] = f"Bearer {tokens[p.key]}"
                    # Alternate which goes first, so neither always meets the warmer caches.
                    raw_first = (i // 2) % 2 == 1
                    if raw_first:
                        raw_ms = await _timed_raw(svc, p.ref, text, sources)
                    t0 = time.perf_counter()
                    data = client.call(SEARCH_GQL, scope="USER", q=text, k=TOP_K)
                    gql_ms = (time.perf_counter() - t0) * 1000
                    if not raw_first:
                        raw_ms = await _timed_raw(svc, p.ref, text, sources)
                    if not data["search"]["hits"]:
                        raise RuntimeError(f"search returned nothing for {text!r}")
                    if i >= warmup:
                        kind = "big" if p.big else "small"
                        gql[kind].append(gql_ms)
                        raw[kind].append(raw_ms)
                    if (i + 1) % 100 == 0:
                        say(f"  {i + 1}/{len(picks)} queries")
            finally:
                client.close()
        load_after = _load()
    all_gql = gql["big"] + gql["small"]
    all_raw = raw["big"] + raw["small"]
    stats = latency_stats(all_gql)
    raw_stats = latency_stats(all_raw, "raw_")
    return {
        "benchmark": "recall-latency",
        "chunks": n,
        "queries": queries,
        "warmup": warmup,
        "top_k": TOP_K,
        "sources": sorted(s.value for s in sources),
        **stats,
        **raw_stats,
        "overhead": round(stats["p95"] / raw_stats["raw_p95"], 3),
        "overhead_p50": round(stats["p50"] / raw_stats["raw_p50"], 3),
        "by_scope": {
            kind: {
                "queries": len(gql[kind]),
                **latency_stats(gql[kind]),
                **latency_stats(raw[kind], "raw_"),
            }
            for kind in ("big", "small")
            if gql[kind]
        },
        "dataset": {
            **dataset,
            "tenants": sorted({p.tenant for p in plans}),
            "big_scope_chunks": big[0].chunks,
            "small_scopes": len(small),
            "small_scope_chunks": [min(p.chunks for p in small), max(p.chunks for p in small)]
            if small
            else [],
            "index_rows": index_rows,
        },
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "cpus": os.cpu_count(),
    }


# -- (b) filtered-recall quality ------------------------------------------------------------


async def bm25_pool(
    svc: Services, ref: ScopeRef, text: str, levers: pure.Levers, base: dict[str, Any]
) -> list[str]:
    """The production BM25 leg's pool for ``text`` (exact: scope-local MaxScore)."""
    docs = [pure.Source.DOCUMENTS]
    terms = fulltext.query_terms(text, levers.question_words)

    async def work(tx: ScopedTx) -> list[str]:
        st = (await legs.read_stats(tx, docs, terms, False)).of(docs[0])
        ranked = await legs.fulltext_leg(tx, docs[0], terms, st, POOL, base, levers.k1, levers.b)
        return ranked.ids

    return await svc.db.scoped(ref).read_tx(work)


async def run_filtered(
    settings: Settings, n: int = 10_000, queries: int = 50, say: Progress = stderr
) -> dict[str, Any]:
    settings = settings.model_copy(update={"log_level": "WARNING"})
    plans = filtered_plan(n)
    async with open_services(settings) as svc:
        dataset = await ensure_loaded(svc, plans, say)
        index_rows = int((await svc.db.read(COUNT_EMBEDDED))[0]["n"])
        gen = TextGen(f"filtered-queries-{n}")
        texts = [gen.query() for _ in range(queries)]
        vectors = await svc.embed(texts)
        view = fr.time_view(svc, None, None)
        docs_only = frozenset({pure.Source.DOCUMENTS})
        levers = pure.Levers.of(settings)
        by_share: dict[str, Any] = {}
        started = time.perf_counter()
        for share, p in zip(SHARES, plans, strict=True):
            who = principal(p.tenant, p.user, AGENT)
            sums = {"vector": 0.0, "hybrid": 0.0, "ann_only": 0.0}
            short = 0
            for text, vector in zip(texts, vectors, strict=True):
                db = svc.db.scoped(p.ref)
                base = {"vector": vector, "prefix": "", "now": svc.clock()}
                exact = await db.read(q.EXACT_CHUNKS, {**base, "k": POOL})
                exact_ids = [r["id"] for r in exact]
                ann = await db.read(q.VECTOR_CHUNKS, {**base, "k": ANN_ASK})
                if len(ann) < min(ANN_ASK, p.chunks):
                    short += 1
                ann_ids = [r["id"] for r in ann]
                # The BM25 leg is exact by construction (scope-local MaxScore).
                ft = await bm25_pool(svc, p.ref, text, levers, {**base, **view.params()})
                fused = pure.rrf({"vector": exact_ids, "fulltext": ft}, k=settings.rrf_k)
                exact_hybrid = [f.id for f in fused]
                results = {}
                for mode in (rr.Mode.VECTOR, rr.Mode.HYBRID):
                    req = rr.RecallRequest(
                        query=text,
                        top_k=TOP_K,
                        sources=docs_only,
                        view=view,
                        mode=mode,
                        rrf_k=settings.rrf_k,
                        levers=levers,
                    )
                    got = await rr.recall(svc, who, [Scope.USER], req)
                    results[mode] = [h.id for h in got.hits]
                sums["vector"] += overlap(results[rr.Mode.VECTOR], exact_ids)
                sums["hybrid"] += overlap(results[rr.Mode.HYBRID], exact_hybrid)
                sums["ann_only"] += overlap(ann_ids, exact_ids)
            label = f"{share:g}%"
            by_share[label] = {
                "scope_chunks": p.chunks,
                "share_of_index": round(p.chunks / max(index_rows, 1), 6),
                "overlap": round(sums["vector"] / queries, 4),
                "overlap_hybrid": round(sums["hybrid"] / queries, 4),
                "overlap_ann_only": round(sums["ann_only"] / queries, 4),
                "ann_short_reads": short,
            }
            say(f"  {label} ({p.chunks} chunks): {by_share[label]}")
    worst = min(v["overlap"] for v in by_share.values())
    return {
        "benchmark": "filtered-recall",
        "chunks": n,
        "queries": queries,
        "top_k": TOP_K,
        "pool": POOL,
        "overlap": {k: v["overlap"] for k, v in by_share.items()},
        "overlap_hybrid": {k: v["overlap_hybrid"] for k, v in by_share.items()},
        "min_overlap": worst,
        "by_share": by_share,
        "dataset": {**dataset, "tenant": plans[0].tenant, "index_rows": index_rows},
        "seconds": round(time.perf_counter() - started, 1),
        "load_avg": _load(),
    }


# -- (c) ingest throughput ----------------------------------------------------------------


async def run_ingest(settings: Settings, n: int = 2000, say: Progress = stderr) -> dict[str, Any]:
    settings = settings.model_copy(update={"log_level": "WARNING"})
    tenant = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    plan = ScopePlan(tenant, "ingest", n)
    who = principal(tenant, plan.user, AGENT)
    documents = list(documents_for(plan))
    warm = list(documents_for(ScopePlan(tenant, "warmup", 2 * MAX_DOC_CHUNKS)))
    async with open_services(settings) as svc:
        try:
            say("warm-up ...")
            for text, _ in warm:
                await svc.embed([c.text for c in markdown.parse(text).chunks])
                await importer.import_document(svc, who, Scope.USER, text, None, None, None)
            await erase_scope(svc, plan.ref)
            load_before = _load()
            say(f"{len(documents)} documents, {n} chunks: embed-only and import_document ...")
            embed_s = ingest_s = parse_s = 0.0
            for i, (text, size) in enumerate(documents):
                t0 = time.perf_counter()
                parsed = await anyio.to_thread.run_sync(markdown.parse, text)
                t1 = time.perf_counter()
                vectors = await svc.embed([c.text for c in parsed.chunks])
                t2 = time.perf_counter()
                await importer.import_document(
                    svc, who, Scope.USER, text, None, f"/bench/{i}.md", None
                )
                t3 = time.perf_counter()
                if len(vectors) != size:
                    raise RuntimeError(f"document {i} parsed into {len(vectors)} chunks")
                parse_s += t1 - t0
                embed_s += t2 - t1
                ingest_s += t3 - t2
                if (i + 1) % 20 == 0:
                    say(f"  {i + 1}/{len(documents)} documents")
            await erase_scope(svc, plan.ref)
            say(f"the same documents in batches of {BULK_DOCS} through import_documents ...")
            bulk_embed_s = bulk_s = 0.0
            for start in range(0, len(documents), BULK_DOCS):
                batch = documents[start : start + BULK_DOCS]
                texts = [c.text for text, _ in batch for c in markdown.parse(text).chunks]
                t0 = time.perf_counter()
                await svc.embed(texts)
                t1 = time.perf_counter()
                drafts = [importer.DocumentDraft(text) for text, _ in batch]
                await importer.import_documents(svc, who, Scope.USER, drafts)
                bulk_embed_s += t1 - t0
                bulk_s += time.perf_counter() - t1
            load_after = _load()
        finally:
            await erase_scope(svc, plan.ref)
    chunks_per_s = n / bulk_s
    embed_per_s = n / bulk_embed_s
    one_per_s = n / ingest_s
    one_embed_per_s = n / embed_s
    return {
        "benchmark": "ingest",
        "chunks": n,
        "documents": len(documents),
        "batch_documents": BULK_DOCS,
        "chunks_per_s": round(chunks_per_s, 1),
        "embed_only_per_s": round(embed_per_s, 1),
        "ratio": round(chunks_per_s / embed_per_s, 3),
        "one_by_one": {
            "chunks_per_s": round(one_per_s, 1),
            "embed_only_per_s": round(one_embed_per_s, 1),
            "ratio": round(one_per_s / one_embed_per_s, 3),
        },
        "seconds": {
            "import_documents": round(bulk_s, 2),
            "embed_only_batched": round(bulk_embed_s, 2),
            "import_document": round(ingest_s, 2),
            "embed_only": round(embed_s, 2),
            "parse_only": round(parse_s, 2),
        },
        "load_avg_before": load_before,
        "load_avg_after": load_after,
        "cpus": os.cpu_count(),
    }
