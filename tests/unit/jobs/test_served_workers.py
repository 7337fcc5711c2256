"""The consolidator workers ``palimpsest serve`` runs: counted while they run, stopped at
shutdown, and cancelled past the grace period (the batch they hold is handed back by
``consolidate_scope``; tests/integration/test_served_consolidators.py shows it)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import cast

import pytest
from prometheus_client import REGISTRY

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument
from palimpsest.jobs.served_workers import ServedConsolidators
from palimpsest.resolvers import cycle as queue
from palimpsest.resolvers.cycle.queue import WaitingScope
from palimpsest.resolvers.services import HarvestWake, Services
from tests.unit.recording import one_server


def gauge() -> float:
    return REGISTRY.get_sample_value("palimpsest_consolidator_workers") or 0.0


def services(settings: Settings) -> Services:
    return cast(Services, SimpleNamespace(settings=settings, wake=HarvestWake(), db=one_server()))


async def nothing(svc: Services, limit: int) -> list[WaitingScope]:
    return []


async def test_workers_are_counted_while_they_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue, "pending_scopes", nothing)
    settings = Settings(serve_consolidators=2, consolidate_poll_seconds=60)
    svc = services(settings)
    before = gauge()
    workers = ServedConsolidators(svc, settings)
    workers.start()
    assert svc.wake.workers == 2
    assert gauge() == before + 2
    summary = await asyncio.wait_for(workers.stop(), 2)  # idle workers stop at once
    assert svc.wake.workers == 0
    assert gauge() == before
    assert summary["leased"] == 0


async def test_zero_starts_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue, "pending_scopes", nothing)
    settings = Settings(serve_consolidators=0)
    svc = services(settings)
    workers = ServedConsolidators(svc, settings)
    workers.start()
    assert svc.wake.workers == 0
    await workers.stop()


async def test_a_worker_stuck_past_the_grace_period_is_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stuck = asyncio.Event()
    cancelled = asyncio.Event()

    async def forever(svc: Services, limit: int) -> list[WaitingScope]:
        stuck.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return []

    monkeypatch.setattr(queue, "pending_scopes", forever)
    settings = Settings(serve_consolidators=1)
    workers = ServedConsolidators(services(settings), settings)
    workers.start()
    await asyncio.wait_for(stuck.wait(), 2)
    await asyncio.wait_for(workers.stop(grace_seconds=0.1), 2)
    assert cancelled.is_set()


async def test_stopped_before_start_never_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server shut down during warm-up: the workers' late start does nothing."""
    monkeypatch.setattr(queue, "pending_scopes", nothing)
    settings = Settings(serve_consolidators=1)
    svc = services(settings)
    workers = ServedConsolidators(svc, settings)
    await workers.stop()
    workers.start()
    assert svc.wake.workers == 0


def test_an_unknown_extractor_stops_the_server_at_start_up() -> None:
    settings = Settings(serve_consolidators=1, extractors="mentions,nosuch")
    with pytest.raises(InvalidArgument, match="nosuch"):
        ServedConsolidators(services(settings), settings)
    # With no worker here, the extractors are this server's business no more.
    none = settings.replace(serve_consolidators=0)
    ServedConsolidators(services(none), none)
