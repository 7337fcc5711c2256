"""The nudge ``harvest`` gives this process's consolidator workers, and how many listen.

A worker that found nothing to lease sleeps for ``PALIMPSEST_CONSOLIDATE_POLL_SECONDS``; a span
banked on this server meanwhile wakes it at once, so a quiet server turns a harvested turn
into memory within about a second instead of a poll later. Spans banked on another replica
are found on the poll (leases keep the replicas apart either way).

The nudge is a counter, not a flag: a worker remembers the count it saw before it looked
for work, and a harvest that landed while it was busy (after the look, before the sleep)
ends the sleep before it starts. Nothing here is shared between processes or threads: the
workers and the resolvers run on the server's one event loop.
"""

from __future__ import annotations

import asyncio

__all__ = ["HarvestWake"]


class HarvestWake:
    def __init__(self) -> None:
        self._count = 0
        self._changed: asyncio.Event | None = None  # made by the first waiter, on its loop
        self.workers = 0  # consolidator workers running in this process

    @property
    def count(self) -> int:
        """Harvests notified so far: what a worker remembers before it looks for work."""
        return self._count

    def notify(self) -> None:
        """Spans were banked: wake every worker waiting now, and any about to wait."""
        self._count += 1
        if self._changed is not None:
            self._changed.set()
            self._changed = None  # later waiters wait for the next harvest

    async def wait(self, seen: int) -> None:
        """Return once a harvest was notified after the count ``seen`` (at once if one was)."""
        while self._count == seen:
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()
