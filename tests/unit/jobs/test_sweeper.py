"""The retention sweeper's walk (``jobs.sweeper``) on a recording executor: pages of scopes
until the walk is over, totals added up and counted, and a stop that ends it between pages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from palimpsest.jobs import sweeper
from palimpsest.resolvers.cycle import Swept
from palimpsest.resolvers.services import Services
from tests.unit.recording import RecordingExecutor, services
from tests.unit.resolvers.cycle.test_sweep import Scopes, walked


def three_scopes(tmp_path: Path) -> tuple[Scopes, RecordingExecutor, Services]:
    scopes = Scopes({"DELETE_OLD_VERSIONS": 2})
    scopes.walk = sorted(
        [walked("acme", "USER", u) for u in ("a", "b", "c")], key=lambda r: r["scope_key"]
    )
    scopes.retention = {
        "versions_seconds": 60,
        "tombstones_seconds": None,
        "done_spans_seconds": None,
    }
    svc, recorder = services(scopes, tmp_path, sweep_batch_size=1)
    return scopes, recorder, svc


async def test_a_walk_goes_page_by_page_to_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sweeper, "SCOPES_PER_PAGE", 2)
    _, recorder, svc = three_scopes(tmp_path)
    before = REGISTRY.get_sample_value("palimpsest_swept_rows_total", {"kind": "versions"}) or 0
    totals = Swept()
    assert await sweeper.walk(svc, totals, asyncio.Event(), tenant="acme") is True
    assert (totals.scopes, totals.versions) == (3, 2)
    pages = [c.params for c in recorder.calls if c.name == "SWEEP_SCOPES"]
    assert [(p["limit"], p["tenant"]) for p in pages] == [(2, "acme"), (2, "acme")]
    assert pages[1]["after"] != ""
    after = REGISTRY.get_sample_value("palimpsest_swept_rows_total", {"kind": "versions"})
    assert after == before + 2


async def test_a_stopped_walk_ends_before_the_next_page(tmp_path: Path) -> None:
    _, recorder, svc = three_scopes(tmp_path)
    stop = asyncio.Event()
    stop.set()
    totals = Swept()
    assert await sweeper.walk(svc, totals, stop) is False
    assert recorder.calls == []
    assert totals.scopes == 0
