"""The harvest queue's gauges (``jobs.queue_metrics``) on a recording executor: one count
over the queue turned into figures, kept for the interval, and a failed count that keeps the
last figures instead of raising."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from prometheus_client import REGISTRY

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.jobs import queue_metrics
from palimpsest.jobs.queue_metrics import QueueFigures, QueueGauges
from tests.unit.recording import NOW, services


class Queue:
    def __init__(self) -> None:
        self.fail = False

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        assert statement.name == "QUEUE_GAUGES"
        if self.fail:
            raise RuntimeError("database down")
        return [
            {
                "status": params["queued"],
                "spans": 10,
                "leased": 3,
                "expired": 1,
                "oldest": NOW - timedelta(minutes=2),
            },
            {"status": params["dead"], "spans": 2, "leased": 0, "expired": 0, "oldest": None},
        ]


async def test_one_count_gives_the_queues_figures(tmp_path: Path) -> None:
    svc, recorder = services(Queue(), tmp_path)
    assert await queue_metrics.count(svc) == QueueFigures(
        queued=7, leased=3, dead=2, expired=1, oldest_queued_seconds=120.0
    )
    [call] = recorder.calls
    assert call.params["now"] == NOW


async def test_an_empty_queue_has_no_oldest(tmp_path: Path) -> None:
    svc, _ = services(lambda s, p: [], tmp_path)
    assert await queue_metrics.count(svc) == QueueFigures(0, 0, 0, 0, None)


async def test_the_gauges_follow_a_count_and_keep_it_for_the_interval(tmp_path: Path) -> None:
    queue = Queue()
    svc, recorder = services(queue, tmp_path)
    gauges = QueueGauges(3600)
    figures = await gauges.refresh(svc)
    assert figures is not None
    assert REGISTRY.get_sample_value("palimpsest_queue_spans", {"state": "queued"}) == 7
    assert REGISTRY.get_sample_value("palimpsest_queue_oldest_pending_seconds") == 120.0
    assert await gauges.refresh(svc) is figures
    assert len(recorder.calls) == 1  # within the interval: not counted again


async def test_a_failed_count_keeps_the_last_figures(tmp_path: Path) -> None:
    queue = Queue()
    svc, recorder = services(queue, tmp_path)
    gauges = QueueGauges(1e-9)
    first = await gauges.refresh(svc)
    queue.fail = True
    assert await gauges.refresh(svc) is first
    assert len(recorder.calls) == 2


async def test_an_interval_of_zero_counts_nothing(tmp_path: Path) -> None:
    svc, recorder = services(Queue(), tmp_path)
    assert await QueueGauges(0).refresh(svc) is None
    async with queue_metrics.refreshing(svc, svc.settings):
        pass  # no metrics port: nothing runs
    assert recorder.calls == []


async def test_refreshing_counts_while_the_listener_is_on(tmp_path: Path) -> None:
    svc, recorder = services(Queue(), tmp_path, metrics_port=9999, queue_metrics_seconds=0.01)
    async with queue_metrics.refreshing(svc, svc.settings):
        for _ in range(200):
            if recorder.calls:
                break
            await asyncio.sleep(0.01)
    assert recorder.calls
    settled = len(recorder.calls)
    await asyncio.sleep(0.05)
    assert len(recorder.calls) == settled  # stopped with the block
