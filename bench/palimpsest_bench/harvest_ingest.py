"""LoCoMo through the memory cycle (``eval locomo --via harvest``).

Each conversation is sent as a runtime would send it: session by session, one run per
session (``run`` = ``session`` = the session's title), in batches of ``BATCH`` turns through
the ``harvest`` resolver; each turn is a span (``speaker``, ``text``, the session's
``observedAt``, ``sourceId`` = its ``dia_id``). Then the queue is drained by consolidator
loops (``consolidate_scope``, the work ``palimpsest consolidate`` does), and the same
evaluation as ``--via import`` runs on the resulting turn chunks: a turn's chunk id is its
span's id, so the receipts map chunks back to ``dia_id``s. A turn's chunk text is
``"<speaker>: <text>"``, exactly the line ``--via import`` makes its chunk of.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from palimpsest.config import Settings
from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.identity.tokens import principal_from_claims
from palimpsest.ontology.extractors import load
from palimpsest.resolvers.cycle import harvesting as hv
from palimpsest.resolvers.cycle.consolidate import WorkerConfig, consolidate_scope
from palimpsest.resolvers.services import Services
from palimpsest_bench.recall_data import Dataset, Doc
from palimpsest_suites.crash import ERASE_SCOPE

Progress = Callable[[str], None]
BATCH = 20  # spans per harvest call
WORKERS = 2  # consolidator loops: one embeds while the other writes
# A batch whose embedding outlasts its lease (long turns on a loaded machine) loses the lease:
# its spans come back once the lease expires, so draining waits this long for them after a
# round that found nothing, polling every ``POLL`` seconds.
_WORKER = WorkerConfig(owner="", extractors=())  # the defaults drain's loops run with
SETTLE_SECONDS = 2 * _WORKER.lease_seconds + _WORKER.backoff_seconds
POLL = 5.0


@dataclass(slots=True)
class Harvested:
    unit_of_chunk: dict[str, str]
    spans: int
    users: list[str]
    harvest_seconds: float = 0.0
    consolidate_seconds: float = 0.0


def run_principal(tenant: str, user: str, session: str) -> Principal:
    """The run that harvests one session, as its token would name it."""
    claims = {"tenant": tenant, "user": user, "agent": "eval", "session": session, "run": session}
    return principal_from_claims(claims)


def span_of(unit_id: str, line: str, observed_at: str | None) -> hv.SpanDraft:
    """A LoCoMo line ``speaker: text`` back as a span (the line itself when it has no speaker)."""
    when = parse_optional(observed_at, "observed_at")
    speaker, sep, text = line.partition(": ")
    if not sep or not speaker.strip() or not text.strip():
        return hv.SpanDraft(line, observed_at=when, source_id=unit_id)
    return hv.SpanDraft(text, speaker=speaker, observed_at=when, source_id=unit_id)


async def harvest_docs(svc: Services, tenant: str, docs: list[Doc]) -> dict[str, str]:
    """Harvest every session; returns span (= chunk) id -> unit id."""
    unit_of: dict[str, str] = {}
    for doc in docs:
        who = run_principal(tenant, doc.owner, doc.title)
        for start in range(0, len(doc.units), BATCH):
            units = doc.units[start : start + BATCH]
            spans = [span_of(u, line, doc.observed_at) for u, line in units]
            receipt = await hv.harvest(svc, who, spans, 1)
            unit_of.update(zip(receipt.span_ids, (u for u, _ in units), strict=True))
    return unit_of


async def drain(svc: Services, settings: Settings, tenant: str, users: list[str]) -> int:
    """Consolidate the users' queues with ``WORKERS`` loops; the spans consolidated."""
    todo = list(users)
    done = 0

    async def worker(i: int) -> None:
        nonlocal done
        cfg = WorkerConfig(
            owner=f"eval-{i}-{uuid.uuid4().hex[:6]}",
            extractors=load(settings.queue.extractor_names),
            batch_size=settings.queue.batch_size,
        )
        while todo:
            user = todo.pop()
            key = resolve_scope(run_principal(tenant, user, "-"), Scope.USER).scope_key
            while (outcome := await consolidate_scope(svc, cfg, tenant, user, key)).leased:
                done += outcome.consolidated

    await asyncio.gather(*(worker(i) for i in range(WORKERS)))
    return done


async def ingest(
    svc: Services, settings: Settings, tenant: str, ds: Dataset, progress: Progress
) -> Harvested:
    users = sorted({d.owner for d in ds.docs})
    spans = sum(len(d.units) for d in ds.docs)
    progress(f"  harvesting {spans} turns of {len(ds.docs)} sessions, {BATCH} per call")
    t0 = time.perf_counter()
    unit_of = await harvest_docs(svc, tenant, ds.docs)
    t1 = time.perf_counter()
    progress(f"  harvested in {t1 - t0:.1f}s; consolidating with {WORKERS} loops")
    done = await drain(svc, settings, tenant, users)
    idle_since = time.perf_counter()
    while done < len(unit_of) and time.perf_counter() - idle_since < SETTLE_SECONDS:
        await asyncio.sleep(POLL)
        if more := await drain(svc, settings, tenant, users):
            done += more
            idle_since = time.perf_counter()
    t2 = time.perf_counter()
    progress(f"  consolidated {done} spans in {t2 - t1:.1f}s ({done / (t2 - t1):.0f}/s)")
    if done != len(unit_of):
        raise RuntimeError(f"{len(unit_of)} spans harvested but {done} consolidated")
    return Harvested(unit_of, spans, users, t1 - t0, t2 - t1)


async def erase(svc: Services, tenant: str, users: list[str]) -> None:
    for user in users:
        ref = resolve_scope(run_principal(tenant, user, "-"), Scope.USER)
        await svc.db.scoped(ref).write(ERASE_SCOPE)
