"""Retrieval quality: LoCoMo, SciFact and TimeQA through the real ingest and recall paths.

Each run loads one dataset into a fresh tenant of the configured Neo4j (the one the running
server uses) with ``import_document`` (the resolver behind GraphQL ``importDocument``: Markdown
parsed into chunks, one embedding batch per document), asks every query with
``resolvers.recall.recall`` (the resolver behind GraphQL ``recall``/``search``) over
``sources={documents}`` in one mode (vector, fulltext or hybrid), scores the ranked hits and
returns one JSON-ready dict. The tenant's documents are deleted afterwards unless ``keep``.

Mappings (``../shared/eval/README.md``):

- LoCoMo: one user per conversation (``sample_id``) in one tenant; each session is a Document
  observed at its ``observed_at`` (naive timestamps are read as UTC) and each turn is exactly
  one paragraph chunk, ``"<speaker>: <text>"``. A hit is a chunk whose ``dia_id`` is in the
  question's ``evidence``. recall@k is "any evidence turn in the top k". Headline metrics average
  the questions of categories 1-4; ``by_category`` has all five (5 = adversarial).
- SciFact: one Document per abstract (the title as its title and as a level-1 heading chunk,
  the abstract as one paragraph chunk); a chunk hit counts for its document, first occurrence
  wins. nDCG@10 as BEIR (binary gains from ``qrels.tsv``) and recall@100 as BEIR's fraction of
  relevant documents found (the resolver serves top_k up to 200; the GraphQL API caps it at 50).
- TimeQA: one Document per Wikipedia page, one paragraph chunk per paragraph, all pages in one
  scope; a hit is a relevant paragraph. nDCG@10 and MRR@10.

Units become single-paragraph Markdown blocks: whitespace runs collapse to one space and a unit
that Markdown would read as something else (a list item, heading, fence, quote, HTML) gets its
first marker backslash-escaped. The loader checks that the parsed document has exactly one
chunk per unit, in order, with the expected text, and maps chunk ids to unit ids by position.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import sqlite3
import threading
import time
import uuid
from array import array
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from palimpsest import markdown
from palimpsest.config import Settings
from palimpsest.embedding import Embedder, Vector
from palimpsest.identity import Scope
from palimpsest.recall import Source
from palimpsest.resolvers import document_import as importer
from palimpsest.resolvers import documents as docs
from palimpsest.resolvers.facts import time_view
from palimpsest.resolvers.recall import Mode, RecallRequest, recall
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services as services
from palimpsest_bench.common import principal

Progress = Callable[[str], None]

SCOPE = Scope.USER
DATASETS = ("locomo", "scifact", "timeqa")
HEADLINE_CATEGORIES = frozenset({"1", "2", "3", "4"})
LOCOMO_CATEGORIES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}
DEFAULT_TOP_K = {"locomo": 10, "scifact": 100, "timeqa": 10}
INGEST_CONCURRENCY = 2  # overlap one document's database write with the next one's embedding
QUERY_CONCURRENCY = 8
DELETE_CONCURRENCY = 8


# -- metrics (pure) -------------------------------------------------------------------------


def dedupe(ranked: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each id (several chunks of one document count once)."""
    return list(dict.fromkeys(ranked))


def hit_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1.0 when any relevant id is in the top ``k`` (LoCoMo's recall@k), else 0.0."""
    wanted = set(relevant)
    return 1.0 if any(r in wanted for r in ranked[:k]) else 0.0


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """The share of relevant ids found in the top ``k`` (BEIR's recall@k); 0.0 if none."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Binary-gain nDCG@k (log2 discount, ranks from 1): BEIR's metric for 0/1 qrels."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, r in enumerate(ranked[:k]) if r in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(wanted), k)))
    return dcg / ideal


def mrr_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """1 / rank of the first relevant id within the top ``k``, else 0.0."""
    wanted = set(relevant)
    for i, r in enumerate(ranked[:k], start=1):
        if r in wanted:
            return 1.0 / i
    return 0.0


METRICS: dict[str, Callable[[Sequence[str], Iterable[str]], float]] = {
    "hit@5": lambda r, g: hit_at_k(r, g, 5),
    "hit@10": lambda r, g: hit_at_k(r, g, 10),
    "recall@100": lambda r, g: recall_at_k(r, g, 100),
    "ndcg@10": lambda r, g: ndcg_at_k(r, g, 10),
    "mrr@10": lambda r, g: mrr_at_k(r, g, 10),
}
# Which metric each dataset reports, under which name.
REPORTED: dict[str, dict[str, str]] = {
    "locomo": {
        "recall@5": "hit@5",
        "recall@10": "hit@10",
        "ndcg@10": "ndcg@10",
        "mrr@10": "mrr@10",
    },
    "scifact": {"ndcg@10": "ndcg@10", "recall@100": "recall@100"},
    "timeqa": {"ndcg@10": "ndcg@10", "mrr@10": "mrr@10"},
}


def score(dataset: str, ranked: Sequence[str], relevant: Iterable[str]) -> dict[str, float]:
    gold = list(relevant)
    return {name: METRICS[metric](ranked, gold) for name, metric in REPORTED[dataset].items()}


def mean_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Average each metric over ``rows`` (rounded to 4 places); empty when there are none."""
    if not rows:
        return {}
    return {name: round(sum(r[name] for r in rows) / len(rows), 4) for name in rows[0]}


# -- Markdown units (pure) ------------------------------------------------------------------

_SPACE = re.compile(r"\s+")
_ORDERED = re.compile(r"^(\d{1,9})([.)])")


def one_block(text: str) -> str:
    """``text`` as one Markdown paragraph line: whitespace collapsed, block markers escaped.

    Raises ``ValueError`` for blank text or text that stays more (or other) than one paragraph.
    """
    line = _SPACE.sub(" ", text).strip()
    if not line:
        raise ValueError("a unit must not be blank")
    if not _is_one_paragraph(line):
        if m := _ORDERED.match(line):  # "1. x" / "1) x" would start an ordered list
            line = f"{m[1]}\\{m[2]}{line[m.end() :]}"
        elif not line[0].isalnum():  # -, +, *, #, >, `, ~, <, =, |, ... : escape the marker
            line = "\\" + line
        if not _is_one_paragraph(line):
            raise ValueError(f"cannot make one paragraph of {line[:60]!r}")
    return line


def _is_one_paragraph(line: str) -> bool:
    parsed = markdown.parse(line + "\n").chunks
    return (
        len(parsed) == 1
        and parsed[0].type is markdown.ChunkType.PARAGRAPH
        and parsed[0].text.strip() == line
    )


def units_markdown(lines: Sequence[str], heading: str | None = None) -> str:
    """Paragraph lines (from ``one_block``) separated by blank lines: one chunk per line,
    after a level-1 heading chunk when ``heading`` is given."""
    blocks = ([f"# {heading}"] if heading else []) + list(lines)
    return "\n\n".join(blocks) + "\n"


def locomo_line(speaker: str, text: str) -> str:
    return one_block(f"{speaker}: {text}")


def wire_time(observed_at: str) -> str:
    """A dataset timestamp for the wire: a naive ``YYYY-MM-DDTHH:MM[:SS]`` is read as UTC."""
    text = observed_at.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?", text):
        return text + "Z"
    return text


# -- datasets (pure) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Doc:
    """One document to import: its owner, title, observed time and units (id, line).

    ``heading`` (a ``one_block`` line) becomes a level-1 heading chunk before the units.
    """

    owner: str
    title: str
    observed_at: str | None
    units: tuple[tuple[str, str], ...]
    heading: str | None = None


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    owner: str
    text: str
    relevant: frozenset[str]
    category: str | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    docs: list[Doc]
    queries: list[Query]
    by_document: bool = False  # a hit is the chunk's document (SciFact), not the chunk


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]


def load_locomo(data: Path) -> Dataset:
    sessions: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for t in read_jsonl(data / "turns.jsonl"):
        sessions[(str(t["sample_id"]), int(t["session"]))].append(t)
    out: list[Doc] = []
    for (sample, session), turns in sorted(sessions.items()):
        turns.sort(key=lambda t: int(t["turn_index"]))
        first = turns[0]
        out.append(
            Doc(
                owner=sample,
                title=f"{sample} session {session} ({first['session_date_time']})",
                observed_at=wire_time(str(first["observed_at"])),
                units=tuple(
                    (str(t["dia_id"]), locomo_line(str(t["speaker"]), str(t["text"])))
                    for t in turns
                ),
            )
        )
    queries = [
        Query(
            id=f"{q['sample_id']}#{q['qa_index']}",
            owner=str(q["sample_id"]),
            text=str(q["question"]),
            relevant=frozenset(str(e) for e in q["evidence"]),
            category=str(q["category"]),
        )
        for q in read_jsonl(data / "qa.jsonl")
    ]
    return Dataset("locomo", out, queries)


def load_scifact(data: Path, corpus: Path | None = None) -> Dataset:
    out = [
        Doc(
            owner="eval",
            title=_title(str(d.get("title") or d["_id"])),
            observed_at=None,
            units=((str(d["_id"]), one_block(str(d["text"]) or str(d["title"]))),),
            heading=one_block(str(d["title"])) if str(d.get("title") or "").strip() else None,
        )
        for d in read_jsonl(corpus or data / "corpus.jsonl")
    ]
    qrels: dict[str, set[str]] = defaultdict(set)
    with (data / "qrels.tsv").open() as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3 and parts[0] != "query-id" and int(parts[2]) > 0:
                qrels[parts[0]].add(parts[1])
    queries = [
        Query(id=str(q["_id"]), owner="eval", text=str(q["text"]), relevant=frozenset(rel))
        for q in read_jsonl(data / "queries.jsonl")
        if (rel := qrels.get(str(q["_id"])))
    ]
    return Dataset("scifact", out, queries, by_document=True)


def load_timeqa(data: Path) -> Dataset:
    pages: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in read_jsonl(data / "corpus.jsonl"):
        pages[str(p["page"])].append(p)
    out: list[Doc] = []
    for page, paras in sorted(pages.items()):
        paras.sort(key=lambda p: int(p["para"]))
        units = tuple(
            (str(p["_id"]), one_block(str(p["text"]))) for p in paras if p["text"].strip()
        )
        out.append(Doc(owner="eval", title=_title(page), observed_at=None, units=units))
    queries = [
        Query(
            id=str(q["_id"]),
            owner="eval",
            text=str(q["question"]),
            relevant=frozenset(str(r) for r in q["relevant"]),
        )
        for q in read_jsonl(data / "queries.jsonl")
        if q["relevant"]
    ]
    return Dataset("timeqa", out, queries)


def _title(text: str) -> str:
    line = _SPACE.sub(" ", text).strip()
    return line[: importer.MAX_TITLE] or "untitled"


LOADERS: dict[str, Callable[[Path], Dataset]] = {
    "locomo": load_locomo,
    "scifact": load_scifact,
    "timeqa": load_timeqa,
}


# -- an opt-in embedding cache (for repeated tuning runs only) -----------------------------


class CachedEmbedder:
    """Wraps an embedder with a SQLite cache keyed by model and text; only used on request.

    Same vectors as the wrapped model (stored as float32, which is what the model makes).
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()  # embed runs in worker threads; one connection
        self._db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vec BLOB)")

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_name}\x1f{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        keys = [self._key(t) for t in texts]
        found: dict[str, Vector] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                sql = f"SELECT key, vec FROM v WHERE key IN ({marks})"  # noqa: S608 - '?' only
                for key, blob in self._db.execute(sql, part):
                    found[key] = Vector(array("f", blob).tolist())
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            vectors = self.inner.embed([texts[i] for i in missing])
            rows = []
            for i, vec in zip(missing, vectors, strict=True):
                found[keys[i]] = vec
                rows.append((keys[i], array("f", vec).tobytes()))
            with self._lock:
                self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
                self._db.commit()
        return [found[k] for k in keys]

    def close(self) -> None:
        with self._lock:
            self._db.close()


# -- running against the database ---------------------------------------------------------


@dataclass(slots=True)
class Loaded:
    unit_of_chunk: dict[str, str] = field(default_factory=dict)  # chunk id -> unit id
    unit_of_document: dict[str, str] = field(default_factory=dict)  # document id -> unit id
    documents: list[tuple[str, str]] = field(default_factory=list)  # (owner, document id)
    chunks: int = 0


async def gather_limited(jobs: Sequence[Callable[[], Awaitable[Any]]], limit: int) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(job: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            return await job()

    return await asyncio.gather(*(one(j) for j in jobs))


async def ingest(svc: Services, tenant: str, ds: Dataset, progress: Progress) -> Loaded:
    loaded = Loaded()
    started = time.perf_counter()
    done = 0
    total = sum(len(d.units) + (d.heading is not None) for d in ds.docs)
    step = max(1, len(ds.docs) // 20)

    async def one(doc: Doc) -> None:
        nonlocal done
        who = principal(tenant, doc.owner)
        text = units_markdown([line for _, line in doc.units], doc.heading)
        imported = await importer.import_document(
            svc, who, SCOPE, text, doc.title, None, doc.observed_at
        )
        chunks = list(imported.chunks)
        if doc.heading is not None:
            head = chunks.pop(0)
            if head.type != markdown.ChunkType.HEADING.value:
                raise RuntimeError(f"document {doc.title!r} did not start with its heading")
            loaded.unit_of_chunk[head.id] = doc.units[0][0]
        if [c.text.strip() for c in chunks] != [line for _, line in doc.units]:
            raise RuntimeError(f"document {doc.title!r} did not parse one chunk per unit")
        for chunk, (unit, _) in zip(chunks, doc.units, strict=True):
            loaded.unit_of_chunk[chunk.id] = unit
        loaded.unit_of_document[imported.summary.id] = doc.units[0][0]
        loaded.documents.append((doc.owner, imported.summary.id))
        loaded.chunks += len(imported.chunks)
        done += 1
        if done % step == 0 or done == len(ds.docs):
            rate = loaded.chunks / max(time.perf_counter() - started, 1e-9)
            progress(
                f"  imported {done}/{len(ds.docs)} documents, "
                f"{loaded.chunks}/{total} chunks ({rate:.0f} chunks/s)"
            )

    await gather_limited([partial(one, d) for d in ds.docs], INGEST_CONCURRENCY)
    return loaded


async def ranked_units(
    svc: Services,
    tenant: str,
    ds: Dataset,
    loaded: Loaded,
    q: Query,
    mode: Mode,
    top_k: int,
    pool: int | None,
) -> list[str]:
    req = RecallRequest(
        query=q.text,
        top_k=top_k,
        sources=frozenset({Source.DOCUMENTS}),
        view=time_view(svc, None, None),
        rrf_k=svc.settings.rrf_k,
        pool_factor=svc.settings.recall_pool_factor,
        vector_weight=svc.settings.rrf_vector_weight,
        fulltext_weight=svc.settings.rrf_fulltext_weight,
        mode=mode,
        pool=pool,
    )
    result = await recall(svc, principal(tenant, q.owner), [SCOPE], req)
    if ds.by_document:
        return dedupe(loaded.unit_of_document[h.document_id or ""] for h in result.hits)
    return [loaded.unit_of_chunk[h.id] for h in result.hits]


async def erase(svc: Services, tenant: str, loaded: Loaded) -> None:
    async def one(owner: str, doc_id: str) -> None:
        await docs.delete_document(svc, principal(tenant, owner), SCOPE, doc_id)

    jobs = [partial(one, o, d) for o, d in loaded.documents]
    await gather_limited(jobs, DELETE_CONCURRENCY)


def summarise(
    ds: Dataset, per_query: Sequence[tuple[Query, dict[str, float]]]
) -> tuple[dict[str, float], dict[str, dict[str, Any]] | None]:
    if ds.name != "locomo":
        return mean_metrics([m for _, m in per_query]), None
    headline = mean_metrics([m for q, m in per_query if q.category in HEADLINE_CATEGORIES])
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q, m in per_query:
        groups[q.category or "?"].append(m)
    by_category: dict[str, dict[str, Any]] = {
        cat: {
            "name": LOCOMO_CATEGORIES.get(cat, cat),
            "n": len(rows),
            **mean_metrics(rows),
        }
        for cat, rows in sorted(groups.items())
    }
    return headline, by_category


async def run(
    settings: Settings,
    dataset: str,
    data: Path,
    mode: Mode,
    progress: Progress,
    *,
    top_k: int | None = None,
    pool: int | None = None,
    keep: bool = False,
    embed_cache: Path | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    started = time.perf_counter()
    ds = LOADERS[dataset](data)
    full_documents = len(ds.docs)
    if limit is not None:
        from palimpsest_bench.subset import limit_dataset

        ds = limit_dataset(ds, limit)
    k = top_k or DEFAULT_TOP_K[dataset]
    tenant = f"eval-{dataset}-{uuid.uuid4().hex[:12]}"
    progress(
        f"{dataset}: {len(ds.docs)} documents, {sum(len(d.units) for d in ds.docs)} units, "
        f"{len(ds.queries)} queries; mode {mode.value}, topK {k}; tenant {tenant}"
    )
    async with services(settings) as base:
        cache = CachedEmbedder(base.embedder, embed_cache) if embed_cache else None
        svc = replace(base, embedder=cache) if cache else base
        loaded = Loaded()
        try:
            ingest_started = time.perf_counter()
            loaded = await ingest(svc, tenant, ds, progress)
            ingest_seconds = time.perf_counter() - ingest_started

            query_started = time.perf_counter()
            jobs = [
                partial(ranked_units, svc, tenant, ds, loaded, q, mode, k, pool) for q in ds.queries
            ]
            rankings: list[list[str]] = await gather_limited(jobs, QUERY_CONCURRENCY)
            query_seconds = time.perf_counter() - query_started
        finally:
            if not keep:
                progress(f"  deleting {len(loaded.documents)} documents")
                await erase(svc, tenant, loaded)
            if cache is not None:
                cache.close()
    per_query = [
        (q, score(dataset, ranked, q.relevant))
        for q, ranked in zip(ds.queries, rankings, strict=True)
    ]
    metrics, by_category = summarise(ds, per_query)
    progress(f"{dataset} {mode.value}: {metrics}")
    result: dict[str, Any] = {
        "dataset": dataset,
        "mode": mode.value,
        "n": sum(
            1 for q, _ in per_query if ds.name != "locomo" or q.category in HEADLINE_CATEGORIES
        ),
        "metrics": metrics,
    }
    if by_category is not None:
        result["by_category"] = by_category
    result.update(
        {
            "seconds": round(time.perf_counter() - started, 2),
            "top_k": k,
            "model": settings.embedding_model,
            "documents": len(ds.docs),
            "chunks": loaded.chunks,
            "ingest_seconds": round(ingest_seconds, 2),
            "ingest_chunks_per_s": round(loaded.chunks / max(ingest_seconds, 1e-9), 1),
            "query_seconds": round(query_seconds, 2),
            "queries_per_s": round(len(ds.queries) / max(query_seconds, 1e-9), 1),
        }
    )
    if limit is not None:
        result["limited"] = {"queries": limit, "documents_of": full_documents}
    if keep:
        result["tenant"] = tenant
    return result
