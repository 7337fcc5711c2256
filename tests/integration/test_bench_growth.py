"""``bench recall-latency --growth`` at tiny sizes on the real Neo4j: one JSON entry per
size with its latency, dominant stage and overlap (exact at these sizes, so 1.0 against the
oracle), and a real PNG of the planned size."""

from __future__ import annotations

import asyncio
import json
import struct
import uuid
from pathlib import Path

from typer.testing import CliRunner

from palimpsest.config import Settings
from palimpsest.runtime import open_services
from palimpsest_bench.commands import bench_app
from palimpsest_bench.growth_plot import HEIGHT_PX, WIDTH_PX
from palimpsest_bench.recall_growth import growth_plan
from palimpsest_bench.recall_load import erase_scope

SIZES = (12, 300)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which a PNG must carry first."""
    assert data[:8] == PNG_MAGIC
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR"
    assert length == 13
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


async def _erase(tenant: str) -> None:
    async with open_services(Settings()) as svc:
        for p in growth_plan(SIZES, True, tenant):
            await erase_scope(svc, p.ref)


def test_growth_prints_one_entry_per_size_and_writes_the_curve(tmp_path: Path) -> None:
    tenant = f"t-growth-{uuid.uuid4().hex[:8]}"
    args = ["recall-latency", "--growth", "--synthetic-vectors", "--sizes", "12,300"]
    args += ["--queries", "3", "--overlap-queries", "6", "--out", str(tmp_path)]
    args += ["--tenant", tenant]
    try:
        result = CliRunner().invoke(bench_app, args)
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
    finally:
        asyncio.run(_erase(tenant))
    assert out["benchmark"] == "recall-latency-growth"
    assert out["sizes"] == list(SIZES)
    assert set(out["by_size"]) == {"12", "300"}
    for key, size in (("12", 12), ("300", 300)):
        row = out["by_size"][key]
        assert row["scope_chunks"] == size
        assert 0 < row["p50"] <= row["p95"] <= row["p99"]
        assert row["dominant_stage"]["stage"] in row["stages"]
        # Scopes this small are scanned exactly and both pools are exact: the search must
        # agree with the oracle, the hybrid too (the oracle fuses as the resolver does).
        assert row["exact_by"] == "cypher"
        assert row["overlap"] == 1.0
        assert row["overlap_hybrid"] == 1.0
        # Every row of a scope this small is probed, and each comes back for its own vector.
        assert row["reach_sample"] == size
        assert row["unreachable_rows"] == 0
    assert out["dataset"]["tenant"] == tenant
    assert out["dataset"]["chunks"] == sum(SIZES)
    png = Path(out["plot"])
    assert png.parent == tmp_path
    assert png.name == "growth.png"
    assert _png_size(png.read_bytes()) == (WIDTH_PX, HEIGHT_PX)


def test_sizes_that_are_not_sizes_are_refused_before_anything_runs() -> None:
    result = CliRunner().invoke(bench_app, ["recall-latency", "--growth", "--sizes", "1k,x"])
    assert result.exit_code != 0
    assert "not a size" in result.output


def test_the_plan_holds_one_scope_of_exactly_each_size() -> None:
    plans = growth_plan([1000, 10, 100], True, "t-x")
    assert [p.chunks for p in plans] == [10, 100, 1000]
    assert {p.tenant for p in plans} == {"t-x"}
    assert [p.big for p in plans] == [False, False, True]
    assert len({p.key for p in plans}) == 3
