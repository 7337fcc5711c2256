"""Prometheus gauges of the harvest queue, recounted in the background while ``/metrics`` is
served.

The figures come from one count over the queue (``QUEUE_GAUGES``: counts and the oldest
age, no content) every ``queue_metrics_seconds``, on the API's own event loop (the metrics
listener runs on another thread and loop, and cannot use the database driver). Workers
count their own events (consolidated spans, failures, dead letters, lease takeovers) as
counters in ``consolidator.py``; ``palimpsest_consolidator_workers`` is how many run in
this server process (``served_workers.py``). ``/readyz`` shows the same count, no older than
a second (``readiness.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from prometheus_client import Gauge

from palimpsest.config import Settings
from palimpsest.cypher import queue as q
from palimpsest.resolvers.cycle import STATUS_PARAMS, Status
from palimpsest.resolvers.services import Services

log = logging.getLogger(__name__)

SPANS = Gauge("palimpsest_queue_spans", "Spans on the harvest queue, by state", ["state"])
OLDEST = Gauge(
    "palimpsest_queue_oldest_pending_seconds", "Age of the oldest span not yet consolidated"
)
EXPIRED = Gauge(
    "palimpsest_queue_expired_leases", "Spans whose lease expired before the worker answered"
)


WORKERS = Gauge(
    "palimpsest_consolidator_workers", "Consolidator workers running in this server process"
)


@dataclass(frozen=True, slots=True)
class QueueFigures:
    """The whole queue's counts (every tenant's: never shown to one tenant's caller)."""

    queued: int  # waiting for a worker (not under a live lease)
    leased: int
    dead: int
    expired: int  # leases that ran out before their worker answered
    oldest_queued_seconds: float | None  # age of the oldest span not yet consolidated


async def count(svc: Services) -> QueueFigures:
    """One count over the queue (``QUEUE_GAUGES``: counts and the oldest age, no content)."""
    now = svc.clock()
    rows = await svc.db.read(q.QUEUE_GAUGES, {**STATUS_PARAMS, "now": now})
    by = {r["status"]: r for r in rows}
    queued = by.get(Status.QUEUED, {})
    leased = int(queued.get("leased") or 0)
    oldest = queued.get("oldest")
    return QueueFigures(
        queued=int(queued.get("spans") or 0) - leased,
        leased=leased,
        dead=int(by.get(Status.DEAD, {}).get("spans") or 0),
        expired=int(queued.get("expired") or 0),
        oldest_queued_seconds=(now - oldest).total_seconds() if oldest else None,
    )


class QueueGauges:
    """The last count, taken again once it is older than the interval; the gauges follow."""

    def __init__(self, interval_seconds: float) -> None:
        self.interval = interval_seconds
        self.last = float("-inf")
        self.figures: QueueFigures | None = None

    async def refresh(self, svc: Services) -> QueueFigures | None:
        """The figures, counted again if the last count is older than the interval (None
        when the interval is 0, or no count ever succeeded); never raises."""
        if self.interval <= 0:
            return None
        if time.monotonic() - self.last < self.interval:
            return self.figures
        self.last = time.monotonic()
        try:
            figures = await count(svc)
        except Exception as e:
            log.warning("queue gauges not refreshed: %s", type(e).__name__)
            return self.figures
        SPANS.labels("queued").set(figures.queued)
        SPANS.labels("leased").set(figures.leased)
        SPANS.labels("dead").set(figures.dead)
        EXPIRED.set(figures.expired)
        OLDEST.set(figures.oldest_queued_seconds or 0)
        self.figures = figures
        return figures


@contextlib.asynccontextmanager
async def refreshing(svc: Services, settings: Settings) -> AsyncIterator[None]:
    """Keep the gauges fresh while the metrics listener is on (and the interval is not 0)."""
    if settings.metrics_port is None or settings.queue.metrics_seconds <= 0:
        yield
        return
    gauges = QueueGauges(settings.queue.metrics_seconds)

    async def loop() -> None:
        while True:
            await gauges.refresh(svc)
            await asyncio.sleep(settings.queue.metrics_seconds)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
