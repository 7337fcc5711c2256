"""The retention sweeper (``palimpsest sweep``): walks every scope in key order and removes
what its tenant's retention policy says is past keeping (``resolvers.sweep``).

A walk is pages of scopes, each scope in bounded batches of one transaction each, so any
number of sweepers may run beside writers and beside each other (the scope's lock orders
them), and a killed sweep leaves nothing half-applied: the next walk finds what is left.
``--once`` walks once and exits; otherwise a walk starts every ``sweep_poll_seconds``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable

from prometheus_client import Counter

from palimpsest.config import Settings
from palimpsest.resolvers.cycle import Swept, sweep_page
from palimpsest.resolvers.services import Services

log = logging.getLogger(__name__)
SCOPES_PER_PAGE = 64
ERROR_PAUSE_SECONDS = 2.0

SWEPT = Counter("palimpsest_swept_rows_total", "Rows retention sweeps removed", ["kind"])
SWEPT_SCOPES = Counter("palimpsest_swept_scopes_total", "Scopes retention sweeps visited")


async def walk(
    svc: Services, totals: Swept, stop: asyncio.Event, tenant: str | None = None
) -> bool:
    """One walk over every scope; False when it was stopped before the end."""
    after: str | None = ""
    while after is not None:
        if stop.is_set():
            return False
        batch = svc.settings.queue.sweep_batch_size
        page = await sweep_page(svc, after, SCOPES_PER_PAGE, batch, tenant)
        totals.add(page.swept)
        _count(page.swept)
        after = page.after
    return True


async def run(
    settings: Settings,
    *,
    once: bool = False,
    tenant: str | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, float]:
    """Open the services and sweep (once, or every ``sweep_poll_seconds`` until stopped)."""
    from palimpsest.runtime import open_services

    settings.neo4j.refuse_sharded("`palimpsest sweep`")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    totals, walks, started = Swept(), 0, time.monotonic()
    async with open_services(settings) as svc:
        if say:
            say(f"sweep: batches of {settings.queue.sweep_batch_size} rows")
        while not stop.is_set():
            try:
                finished = await walk(svc, totals, stop, tenant)
            except Exception as e:
                # Never the message: it may quote parameters. A batch is whole or not at all.
                log.error("sweep walk failed: %s", type(e).__name__)
                if once:
                    raise
                await _pause(stop, ERROR_PAUSE_SECONDS)
                continue
            walks += finished
            if once:
                break
            await _pause(stop, settings.queue.sweep_poll_seconds)
    seconds = time.monotonic() - started
    return {
        **totals.as_dict(),
        "walks": walks,
        "seconds": round(seconds, 2),
        "rows_per_second": round(totals.rows / seconds, 1) if seconds > 0 else 0.0,
    }


def _count(swept: Swept) -> None:
    SWEPT_SCOPES.inc(swept.scopes)
    for kind, n in swept.as_dict().items():
        if kind not in ("scopes", "rows", "batches") and n:
            SWEPT.labels(kind=kind).inc(n)


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
