"""The consolidator process: workers that drain the harvest queue (``palimpsest consolidate``).

Each worker loops: find scopes with leasable spans, lease a batch in one of them, consolidate
it (``resolvers.consolidate``), repeat. Several workers may run in one process (``--workers``)
and any number of processes on any machines against the same Neo4j: leases keep them apart,
and a dead worker's leases expire for another to take over. ``--once`` drains what is leasable
now and exits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import secrets
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from prometheus_client import Counter

from palimpsest.config import Settings
from palimpsest.extraction import load_extractors, load_judge
from palimpsest.resolvers import cycle as queue
from palimpsest.resolvers.cycle import Outcome, WorkerConfig, consolidate_scope
from palimpsest.resolvers.services import HarvestWake, Services

log = logging.getLogger(__name__)
SCOPES_PER_ROUND = 64
ERROR_PAUSE_SECONDS = 2.0
ONCE_IDLE_ROUNDS = 3  # --once: rounds that lease nothing before the worker gives up

CONSOLIDATED = Counter("palimpsest_consolidated_spans_total", "Spans turned into memory")
FAILED = Counter("palimpsest_consolidation_failures_total", "Span consolidation failures")
DEAD = Counter("palimpsest_dead_letters_total", "Spans moved to the dead-letter state")
TAKEOVERS = Counter("palimpsest_lease_takeovers_total", "Spans leased after a lease expired")
# The extractors' counts the summary shows, when one is not zero (docs/extraction.md).
EXTRACTION_SUMMARY = (
    "facts",
    "dropped",
    "extraction_failed",
    "extraction_refused",
    "tokens_in",
    "tokens_out",
    "judged",
    "judge_dropped",
    "judge_failed",
    "judge_refused",
)


@dataclass(slots=True)
class Totals:
    leased: int = 0
    consolidated: int = 0
    failed: int = 0
    dead: int = 0
    takeovers: int = 0
    closed: int = 0
    # The extractors' counts (model facts kept and dropped, failed spans, tokens in and out).
    extraction: dict[str, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def add(self, o: Outcome) -> None:
        self.leased += o.leased
        self.consolidated += o.consolidated
        self.failed += o.failed
        self.dead += o.dead
        self.takeovers += o.takeovers
        self.closed += o.closed
        for name, n in o.extraction:
            self.extraction[name] = self.extraction.get(name, 0) + n
        CONSOLIDATED.inc(o.consolidated)
        FAILED.inc(o.failed)
        DEAD.inc(o.dead)
        TAKEOVERS.inc(o.takeovers)

    def as_dict(self) -> dict[str, float]:
        return {
            "leased": self.leased,
            "consolidated": self.consolidated,
            "failed": self.failed,
            "dead_letter": self.dead,
            "takeovers": self.takeovers,
            "closed": self.closed,
            **{k: self.extraction[k] for k in EXTRACTION_SUMMARY if self.extraction.get(k)},
            "seconds": round(time.monotonic() - self.started, 2),
        }


def worker_config(settings: Settings, index: int, lease_seconds: float | None) -> WorkerConfig:
    """One worker's configuration; its lease owner is unique across hosts and restarts."""
    owner = f"{socket.gethostname()}:{os.getpid()}:{index}:{secrets.token_hex(4)}"
    return WorkerConfig(
        owner=owner,
        extractors=load_extractors(settings, lease_seconds),
        batch_size=settings.queue.batch_size,
        lease_seconds=lease_seconds or settings.queue.lease_seconds,
        max_attempts=settings.queue.max_attempts,
        backoff_seconds=settings.queue.backoff_seconds,
        judge=load_judge(settings),
    )


async def work(
    svc: Services,
    cfg: WorkerConfig,
    totals: Totals,
    stop: asyncio.Event,
    *,
    once: bool,
    wake: HarvestWake | None = None,
) -> None:
    """One worker's loop, until ``stop`` is set (or, with ``once``, nothing is leasable).
    ``wake``: a harvest on this process ends an idle worker's wait (``palimpsest serve``)."""
    idle = 0
    while not stop.is_set():
        seen = wake.count if wake else 0  # before the look: a harvest after it is not missed
        try:
            scopes = [
                (on, s)
                for on in _on_every_server(svc)
                for s in await queue.pending_scopes(on, SCOPES_PER_ROUND)
            ]
            random.shuffle(scopes)  # spread concurrent workers over the waiting scopes
            leased = 0
            for on, s in scopes:
                if stop.is_set():
                    break
                outcome = await consolidate_scope(
                    on, cfg, s.tenant_id, s.owner_id, s.scope_key, stopping=stop.is_set
                )
                totals.add(outcome)
                leased += outcome.leased + outcome.dead
        except Exception as e:
            # Never the message: it may quote parameters. The lease expires; a worker retries.
            log.error("consolidator round failed: %s", type(e).__name__)
            await _pause(stop, ERROR_PAUSE_SECONDS)
            continue
        idle = 0 if leased else idle + 1
        if once and (not scopes or idle >= ONCE_IDLE_ROUNDS):
            return
        if not leased:
            # Nothing waits, or another worker took what did between the look and the lease.
            await _pause(stop, 0.2 if once else svc.settings.queue.poll_seconds, wake, seen)


def _on_every_server(svc: Services) -> list[Services]:
    """The services once per Neo4j server: with tenant shards, a worker leases from every
    shard, each scope's work on its own shard; ``svc`` itself on one server."""
    handles = svc.db.everywhere()
    if handles == [svc.db]:
        return [svc]
    return [replace(svc, db=db) for db in handles]


async def run(
    settings: Settings,
    *,
    workers: int = 1,
    once: bool = False,
    lease_seconds: float | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, float]:
    """Open the services, run ``workers`` loops until stopped (or drained with ``once``)."""
    from palimpsest.runtime import open_services

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    totals = Totals()
    async with open_services(settings) as svc:
        configs = [worker_config(settings, i, lease_seconds) for i in range(workers)]
        if say:
            say(f"consolidator: {workers} worker(s), extractors {settings.queue.extractor_names}")
        await asyncio.gather(*(work(svc, c, totals, stop, once=once) for c in configs))
    return totals.as_dict()


async def _pause(
    stop: asyncio.Event, seconds: float, wake: HarvestWake | None = None, seen: int = 0
) -> None:
    """Sleep ``seconds``, or less: until stopped, or until a harvest after the count ``seen``."""
    waits: list[asyncio.Future[object]] = [asyncio.ensure_future(stop.wait())]
    if wake is not None:
        waits.append(asyncio.ensure_future(wake.wait(seen)))
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
