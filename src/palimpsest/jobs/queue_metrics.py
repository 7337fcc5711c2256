"""Prometheus gauges of the harvest queue, recounted in the background while ``/metrics`` is
served.

The figures come from one count over the queue (``QUEUE_GAUGES``: counts and the oldest
age, no content) every ``queue_metrics_seconds``, on the API's own event loop (the metrics
listener runs on another thread and loop, and cannot use the database driver). Workers
count their own events (consolidated spans, failures, dead letters, lease takeovers) as
counters in ``consolidator.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator

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


class QueueGauges:
    def __init__(self, interval_seconds: float) -> None:
        self.interval = interval_seconds
        self.last = float("-inf")

    async def refresh(self, svc: Services) -> None:
        """Update the gauges if the last update is older than the interval; never raises."""
        if self.interval <= 0 or time.monotonic() - self.last < self.interval:
            return
        self.last = time.monotonic()
        now = svc.clock()
        try:
            rows = await svc.db.read(q.QUEUE_GAUGES, {**STATUS_PARAMS, "now": now})
        except Exception as e:
            log.warning("queue gauges not refreshed: %s", type(e).__name__)
            return
        by = {r["status"]: r for r in rows}
        queued = by.get(Status.QUEUED, {})
        leased = int(queued.get("leased") or 0)
        expired = int(queued.get("expired") or 0)
        SPANS.labels("queued").set(int(queued.get("spans") or 0) - leased)
        SPANS.labels("leased").set(leased)
        SPANS.labels("dead").set(int(by.get(Status.DEAD, {}).get("spans") or 0))
        EXPIRED.set(expired)
        oldest = queued.get("oldest")
        OLDEST.set((now - oldest).total_seconds() if oldest else 0)


@contextlib.asynccontextmanager
async def refreshing(svc: Services, settings: Settings) -> AsyncIterator[None]:
    """Keep the gauges fresh while the metrics listener is on (and the interval is not 0)."""
    if settings.metrics_port is None or settings.queue_metrics_seconds <= 0:
        yield
        return
    gauges = QueueGauges(settings.queue_metrics_seconds)

    async def loop() -> None:
        while True:
            await gauges.refresh(svc)
            await asyncio.sleep(settings.queue_metrics_seconds)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
