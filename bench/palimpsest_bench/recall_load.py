"""The recall benchmarks' datasets: scope plans, synthetic Markdown, and loading.

Texts come from a fixed vocabulary (topics, names, places, years), so both the vector and the
full-text leg have signal; no evaluation data is read. Datasets are written through the
``importDocuments`` resolver (``import_documents``: parse, embed every chunk of the batch in
one call, one write transaction), so they hold exactly what the API would have written.

Fast load path (``synthetic``): the same resolver with ``HashEmbedder`` vectors instead of the
model's (the embedding cost is measured apart, by ``bench ingest``), whole documents batched
per transaction, two batches in flight. Only timings are measured on such data, or overlaps
whose queries are hash vectors too.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from palimpsest.cypher.driver.executor import CrossScopeStatement, Statement
from palimpsest.identity import Scope, ScopeRef, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.services import Services
from palimpsest_bench.common import principal

Progress = Callable[[str], None]

SHARES = (0.01, 0.1, 1.0, 10.0, 100.0)  # percent of N
LATENCY_TENANTS = 4
BIG_SHARE = 0.2
SMALL_MIN, SMALL_MAX = 10, 500
MAX_DOC_CHUNKS = 25
LOAD_CONCURRENCY = 2
BATCH_CHUNKS = 400  # chunks per import_documents call when loading
AGENT = "bench"

# Bench-only statements: the product has no "erase a scope's documents" or "count a scope".
# The two counts read across scopes on purpose (sizes only, never content): declared unscoped.
COUNT_SCOPES = CrossScopeStatement(
    "BENCH_COUNT_SCOPES",
    """
UNWIND $keys AS key
RETURN key, COUNT { MATCH (c:Chunk {scope_key: key}) WHERE c.index IS NOT NULL } AS n
""",
)
COUNT_EMBEDDED = CrossScopeStatement(
    "BENCH_COUNT_EMBEDDED",
    "MATCH (c:Chunk) WHERE c.index IS NOT NULL RETURN count(c) AS n",
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


def filtered_plan(n: int, synthetic: bool = False) -> list[ScopePlan]:
    """Scopes holding exactly 0.01 %, 0.1 %, 1 %, 10 % and 100 % of ``n`` (at least one row).
    Synthetic-vector datasets live in a tenant of their own."""
    if n < 1:
        raise ValueError("n must be positive")
    tenant = f"bench-filtered-synth-{n}" if synthetic else f"bench-filtered-{n}"
    return [
        ScopePlan(tenant, f"share-{s:g}", max(1, round(n * s / 100)), big=s == 100.0)
        for s in SHARES
    ]


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


async def ensure_loaded(
    svc: Services, plans: Sequence[ScopePlan], say: Progress, batch_chunks: int = BATCH_CHUNKS
) -> dict[str, Any]:
    """Load every scope whose chunk count is not the planned one (erasing a partial load).
    Each scope's documents go in batches of about ``batch_chunks`` chunks, one
    ``import_documents`` call (one transaction) each, ``LOAD_CONCURRENCY`` in flight."""
    rows = await svc.db.read(COUNT_SCOPES, {"keys": [p.key for p in plans]})
    have = {r["key"]: int(r["n"]) for r in rows}
    todo = [p for p in plans if have.get(p.key, 0) != p.chunks]
    total = sum(p.chunks for p in plans)
    if not todo:
        say(f"dataset present: {total} chunks in {len(plans)} scopes (cached, not reloaded)")
        # A dataset loaded before term peaks were kept gets them, as a fresh load would have.
        peaks = 0
        for p in plans:
            peaks += sum((await term_index.backfill_peaks(svc.db.scoped(p.ref))).values())
        if peaks:
            say(f"  gave {peaks} terms their peaks (statistics older than peaks)")
        return {
            "cached": True,
            "chunks": total,
            "scopes": len(plans),
            "load_seconds": 0.0,
            "peaks_backfilled": peaks,
        }
    resume: dict[str, int] = {}
    for p in todo:
        got = have.get(p.key, 0)
        if got and got in boundaries(p, batch_chunks):
            say(f"  scope {p.tenant}/{p.user} is partial ({got}/{p.chunks}); resuming")
            resume[p.key] = got
        elif got:
            say(f"  scope {p.tenant}/{p.user} is partial ({got}/{p.chunks}); erasing")
            await erase_scope(svc, p.ref)
    pending = sum(p.chunks - resume.get(p.key, 0) for p in todo)
    say(f"loading {pending} of {total} chunks into {len(todo)} scopes via import_documents ...")
    started = time.perf_counter()
    done = 0
    last = started
    work = batches(todo, batch_chunks, resume)

    async def worker() -> None:
        nonlocal done, last
        for p, drafts, size in work:  # one shared iterator: each batch goes to one worker
            who = principal(p.tenant, p.user, AGENT)
            await importer.import_documents(svc, who, Scope.USER, drafts)
            done += size
            now = time.perf_counter()
            if now - last >= 10 or done == pending:
                last = now
                rate = done / (now - started)
                eta = (pending - done) / max(rate, 1e-9)
                say(f"  loaded {done}/{pending} chunks ({rate:.0f}/s, ~{eta:.0f}s left)")

    await asyncio.gather(*(worker() for _ in range(LOAD_CONCURRENCY)))
    seconds = time.perf_counter() - started
    return {
        "cached": False,
        "chunks": total,
        "scopes": len(plans),
        "loaded_chunks": pending,
        "batch_chunks": batch_chunks,
        "load_seconds": round(seconds, 1),
        "load_chunks_per_s": round(pending / seconds, 1),
    }


def batches(
    plans: Sequence[ScopePlan], batch_chunks: int, resume: Mapping[str, int] | None = None
) -> Iterator[tuple[ScopePlan, list[importer.DocumentDraft], int]]:
    """Each scope's documents, in order, grouped into batches of at least ``batch_chunks``
    chunks (the last of a scope may hold fewer), at most ``importer.MAX_BATCH`` documents;
    a scope's first ``resume[key]`` chunks (whole batches, already written) are skipped."""
    for p in plans:
        skip = (resume or {}).get(p.key, 0)
        drafts: list[importer.DocumentDraft] = []
        size = written = 0
        for serial, (text, chunks) in enumerate(documents_for(p)):
            drafts.append(importer.DocumentDraft(text, path=f"/bench/{serial}.md"))
            size += chunks
            if size >= batch_chunks or len(drafts) == importer.MAX_BATCH:
                if written >= skip:
                    yield p, drafts, size
                written += size
                drafts, size = [], 0
        if drafts and written >= skip:
            yield p, drafts, size


def boundaries(plan: ScopePlan, batch_chunks: int) -> set[int]:
    """The chunk counts a scope holds after each whole batch (batches commit atomically)."""
    found, total = set(), 0
    for _, _, size in batches([plan], batch_chunks):
        total += size
        found.add(total)
    return found


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def cpu_steal_seconds() -> float | None:
    """CPU time the hypervisor has taken from this machine since boot, all CPUs (Linux's
    ``/proc/stat``); None where there is no such file."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def stolen_since(before: float | None) -> float | None:
    """CPU seconds the hypervisor took since ``before`` (a ``cpu_steal_seconds`` reading)."""
    now = cpu_steal_seconds()
    return None if before is None or now is None else round(now - before, 2)
