"""The nudge harvest gives the in-process consolidator workers."""

from __future__ import annotations

import asyncio

from palimpsest.resolvers.services import HarvestWake


async def test_a_waiter_wakes_when_a_harvest_is_notified() -> None:
    wake = HarvestWake()
    waiting = asyncio.create_task(wake.wait(wake.count))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    wake.notify()
    await asyncio.wait_for(waiting, 1)


async def test_every_waiter_wakes() -> None:
    wake = HarvestWake()
    seen = wake.count
    waiting = [asyncio.create_task(wake.wait(seen)) for _ in range(3)]
    await asyncio.sleep(0.01)
    wake.notify()
    await asyncio.wait_for(asyncio.gather(*waiting), 1)


async def test_a_harvest_before_the_wait_is_not_missed() -> None:
    """A worker remembers the count before it looks for work; a harvest that lands while it
    looks ends its wait at once."""
    wake = HarvestWake()
    seen = wake.count
    wake.notify()  # while the worker was busy
    await asyncio.wait_for(wake.wait(seen), 0.1)


async def test_a_later_wait_waits_for_the_next_harvest() -> None:
    wake = HarvestWake()
    wake.notify()
    waiting = asyncio.create_task(wake.wait(wake.count))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    wake.notify()
    await asyncio.wait_for(waiting, 1)
