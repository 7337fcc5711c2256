"""The consolidator worker's loop: it sleeps its poll interval when nothing waits, unless a
harvest on this process wakes it, and it stops when told."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest

from palimpsest.jobs.consolidator import Totals, work
from palimpsest.resolvers import cycle as queue
from palimpsest.resolvers.cycle.consolidate import WorkerConfig
from palimpsest.resolvers.cycle.queue import WaitingScope
from palimpsest.resolvers.services import HarvestWake, Services
from tests.unit.recording import one_server

POLL = 60.0  # far longer than any test waits: only a wake (or stop) ends a pause


class Looks:
    """Stands in for the queue's ``pending_scopes``: records when the worker looked."""

    def __init__(self, during: Any = None) -> None:
        self.at: list[float] = []
        self.during = during

    async def __call__(self, svc: Services, limit: int) -> list[WaitingScope]:
        self.at.append(time.monotonic())
        if self.during is not None:
            self.during(len(self.at))
        return []

    async def until(self, n: int, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while len(self.at) < n:
            assert time.monotonic() < deadline, f"{len(self.at)} looks, wanted {n}"
            await asyncio.sleep(0.01)


def idle_services() -> Services:
    settings = SimpleNamespace(queue=SimpleNamespace(poll_seconds=POLL))
    return cast(Services, SimpleNamespace(settings=settings, db=one_server()))


def start(wake: HarvestWake | None, stop: asyncio.Event) -> asyncio.Task[None]:
    cfg = WorkerConfig(owner="unit", extractors=[])
    return asyncio.create_task(work(idle_services(), cfg, Totals(), stop, once=False, wake=wake))


async def test_a_harvest_wakes_an_idle_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    looks = Looks()
    monkeypatch.setattr(queue, "pending_scopes", looks)
    wake, stop = HarvestWake(), asyncio.Event()
    task = start(wake, stop)
    await looks.until(1, 5)
    await asyncio.sleep(0.1)
    assert len(looks.at) == 1  # asleep for its poll interval
    notified = time.monotonic()
    wake.notify()
    await looks.until(2, 1)
    assert looks.at[1] - notified < 0.5
    stop.set()
    await asyncio.wait_for(task, 1)


async def test_a_harvest_during_the_look_is_not_slept_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wake, stop = HarvestWake(), asyncio.Event()
    # The span lands after the worker looked and found nothing, before it sleeps.
    looks = Looks(during=lambda n: wake.notify() if n == 1 else None)
    monkeypatch.setattr(queue, "pending_scopes", looks)
    task = start(wake, stop)
    await looks.until(2, 1)
    stop.set()
    await asyncio.wait_for(task, 1)


async def test_without_a_wake_the_worker_waits_its_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    looks = Looks()
    monkeypatch.setattr(queue, "pending_scopes", looks)
    stop = asyncio.Event()
    task = start(None, stop)
    await looks.until(1, 5)
    await asyncio.sleep(0.3)
    assert len(looks.at) == 1
    stop.set()
    await asyncio.wait_for(task, 1)  # a stop ends the pause at once
