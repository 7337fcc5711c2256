"""The consolidator workers ``palimpsest serve`` runs on its own event loop
(``PALIMPSEST_SERVE_CONSOLIDATORS``, default 1), so harvested turns become memory with no
separate ``palimpsest consolidate``.

They are the command's workers (``consolidator.work``), started once start-up's warm-up has
ended (its figures and theirs would share the CPU otherwise) and woken by a harvest on this
server (``Services.wake``). The work proportional to a batch runs off the loop: embedding in
a thread, the turns' term indexing in the offload workers. At shutdown a worker takes no new
lease, finishes the batch it holds, and is given ``STOP_GRACE_SECONDS`` to do so; past that
it is cancelled, and the batch it held is handed back (``release``) for another worker. A
worker that dies without either leaves leases that expire and are taken over: nothing
accepted is lost.
"""

from __future__ import annotations

import asyncio
import logging

from palimpsest.config import Settings
from palimpsest.jobs.consolidator import Totals, work, worker_config
from palimpsest.jobs.queue_metrics import WORKERS
from palimpsest.resolvers.services import Services

__all__ = ["STOP_GRACE_SECONDS", "ServedConsolidators"]

log = logging.getLogger(__name__)
STOP_GRACE_SECONDS = 20.0


class ServedConsolidators:
    def __init__(self, svc: Services, settings: Settings) -> None:
        self.svc = svc
        self.count = settings.queue.serve_consolidators
        self.totals = Totals()
        # Built now, at start-up: an unknown extractor name stops the server before it serves.
        self._configs = [worker_config(settings, i, None) for i in range(self.count)]
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start the workers (none when the setting is 0); they run until ``stop``."""
        if self._tasks or self.count == 0 or self._stop.is_set():
            return
        for i, cfg in enumerate(self._configs):
            loop = work(self.svc, cfg, self.totals, self._stop, once=False, wake=self.svc.wake)
            self._tasks.append(asyncio.create_task(loop, name=f"consolidator-{i}"))
        self.svc.wake.workers += self.count
        WORKERS.inc(self.count)
        log.info("consolidator workers: %d", self.count)

    async def stop(self, grace_seconds: float = STOP_GRACE_SECONDS) -> dict[str, float]:
        """Finish (or, past ``grace_seconds``, hand back) the leased batches; the totals."""
        self._stop.set()
        if not self._tasks:
            return self.totals.as_dict()
        self.svc.wake.workers -= self.count
        WORKERS.dec(self.count)
        _, late = await asyncio.wait(self._tasks, timeout=grace_seconds)
        for task in late:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        summary = self.totals.as_dict()
        log.info("consolidator workers stopped: %s", summary)
        return summary
