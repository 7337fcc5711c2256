"""``bench recall-latency --tenants N``: a tenant of 200 rows beside N others, against the same
tenant alone (issue 47 item 2).

Two managed Neo4j servers of the bench's own, with the same heap and page cache: ``loaded``
(home ``<neo4j-home>/loaded``, the given ports) holds N tenants of 50-500 rows
(``tenant_plan``, loaded by ``tenant_load``) and the measured tenant; ``empty`` (home
``<neo4j-home>/empty``, both ports plus one) holds the measured tenant only. The loaded
server is restarted before measuring and its start-up timed (process start to Bolt ready,
then to the first answered search). Then ``tenant_measure`` interleaves searches, note writes
and fact writes on both, and the result adds the size on disk of each server's indexes (their
folders under ``schema/index``, by index name), the store, and the memory each server uses
(heap used and committed, page cache, resident set).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from neo4j import AsyncDriver, AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.local import neo4j as neo4j_local
from palimpsest.local.neo4j import credentials
from palimpsest.runtime import open_services
from palimpsest_bench import scale_server, tenant_load, tenant_measure
from palimpsest_bench.recall_load import load_average
from palimpsest_bench.tenant_plan import target_plan, tenant_plan
from palimpsest_suites.faults import prepare_home

Say = Callable[[str], None]
HEAP = "2g"
PAGECACHE = "3g"
SIZED_FOR_CHUNKS = 1_000_000  # only its quota matters: every tenant here is far below
SHOW_INDEXES = "SHOW INDEXES YIELD id, name, type, entityType RETURN id, name, type"
HEAP_JMX = """
CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes
RETURN attributes.HeapMemoryUsage.value.properties AS heap
"""


def server_settings(source: Settings, home: Path, bolt: int, http: int) -> Settings:
    """A server of the bench's own (``scale_server``'s settings: its ports checked, quotas
    wide), sized alike whatever it holds."""
    s = scale_server.scale_settings(home.resolve(), SIZED_FOR_CHUNKS, bolt, http, source)
    return s.replace(neo4j_heap=HEAP, neo4j_pagecache=PAGECACHE)


@contextlib.contextmanager
def running(s: Settings, source: Settings, say: Say) -> Iterator[float | None]:
    """The server started if it is not running (yields its start-up seconds, or None if it
    was running), stopped on exit if this call started it."""
    started: float | None = None
    if not neo4j_local.status(s).running:
        prepare_home(s, source, say)
        t0 = time.perf_counter()
        neo4j_local.start(s, say)
        started = time.perf_counter() - t0
    try:
        yield started
    finally:
        if started is not None and neo4j_local.status(s).running:
            neo4j_local.stop(s, say)


def driver_for(s: Settings) -> AsyncDriver:
    return AsyncGraphDatabase.driver(
        s.bolt_uri, auth=credentials(s), notifications_min_severity="OFF"
    )


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(root) / name).stat().st_size
    return total


def index_folders(s: Settings) -> dict[str, int]:
    """Bytes of each index folder of the database (``schema/index/<provider>/<id>``), by id."""
    base = s.neo4j_home / "data" / "databases" / "neo4j" / "schema" / "index"
    out: dict[str, int] = {}
    if base.is_dir():
        for provider in base.iterdir():
            for folder in provider.iterdir() if provider.is_dir() else ():
                out[folder.name] = out.get(folder.name, 0) + folder_bytes(folder)
    return out


def index_sizes(folders: dict[str, int], indexes: list[dict[str, Any]]) -> dict[str, int]:
    """Index folder bytes by index name (``<type>:<name>``); folders of no listed index under
    their id."""
    named = {str(i["id"]): f"{i['type'].lower()}:{i['name']}" for i in indexes}
    return {named.get(k, k): v for k, v in sorted(folders.items(), key=lambda kv: -kv[1])}


def resident_bytes(pid: int | None) -> int | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


async def server_figures(s: Settings, driver: AsyncDriver) -> dict[str, Any]:
    """Index and store sizes on disk, and memory."""
    indexes = [r.data() for r in (await driver.execute_query(SHOW_INDEXES))[0]]
    heap: dict[str, Any] | None = None
    with contextlib.suppress(Exception):  # JMX may be off; the figure is then absent
        heap = dict((await driver.execute_query(HEAP_JMX))[0][0]["heap"])
    sizes = index_sizes(index_folders(s), indexes)
    return {
        "heap": s.neo4j.heap,
        "pagecache": s.neo4j.pagecache,
        "disk_bytes": scale_server.disk_bytes(s),
        "index_bytes_total": sum(sizes.values()),
        "index_bytes": sizes,
        "heap_used_bytes": heap.get("used") if heap else None,
        "heap_committed_bytes": heap.get("committed") if heap else None,
        "rss_bytes": resident_bytes(neo4j_local.status(s).pid),
    }


async def load_phase(
    loaded: Settings, empty: Settings, count: int, say: Say, seconds: float | None = None
) -> dict[str, Any]:
    target = target_plan()
    figures: dict[str, Any] = {}
    for name, s, plans in (("loaded", loaded, tenant_plan(count)), ("empty", empty, [])):
        quiet = s.replace(log_level="WARNING")
        async with open_services(quiet) as svc:
            driver = driver_for(s)
            try:
                if plans:
                    figures[name] = await tenant_load.ensure_loaded(
                        svc, driver, plans, say, seconds
                    )
                await tenant_load.ensure_written(tenant_load.hashed(svc), driver, target, say)
            finally:
                await driver.close()
    return figures


async def measure_phase(
    loaded: Settings, empty: Settings, rounds: int, warmup: int, say: Say
) -> dict[str, Any]:
    quiet = {"log_level": "WARNING", "rate_limit_per_second": 0}
    tag = time.strftime("%Y%m%dT%H%M%S")
    t0 = time.perf_counter()
    async with (
        open_services(loaded.replace(**quiet)) as a,
        open_services(empty.replace(**quiet)) as b,
    ):
        services = {"loaded": tenant_load.hashed(a), "empty": tenant_load.hashed(b)}
        first = await tenant_measure.measure(services, target_plan(), 1, 0, say, f"{tag}-first")
        first_search_s = time.perf_counter() - t0
        say(f"measuring: {warmup} warm-up and {rounds} rounds on both servers ...")
        load_before = load_average()
        result = await tenant_measure.measure(services, target_plan(), rounds, warmup, say, tag)
        result["load_avg_before"] = load_before
        result["load_avg_after"] = load_average()
        result["first_round_ms"] = first["figures"]
    result["services_and_first_round_s"] = round(first_search_s, 2)
    servers = {}
    for name, s in (("loaded", loaded), ("empty", empty)):
        driver = driver_for(s)
        try:
            servers[name] = await server_figures(s, driver)
        finally:
            await driver.close()
    result["servers"] = servers
    return result


def run_tenants(
    source: Settings,
    home: Path,
    count: int,
    bolt: int,
    http: int,
    rounds: int,
    warmup: int,
    say: Say,
    load_only: bool = False,
    load_seconds: float | None = None,
) -> dict[str, Any]:
    """Load (or reuse) both databases, restart the loaded one timing its start, measure."""
    loaded = server_settings(source, home / "loaded", bolt, http)
    empty = server_settings(source, home / "empty", bolt + 1, http + 1)
    plans = tenant_plan(count)
    with running(loaded, source, say), running(empty, source, say):
        dataset = asyncio.run(load_phase(loaded, empty, count, say, load_seconds))
    result: dict[str, Any] = {
        "benchmark": "recall-latency-tenants",
        "tenants": count,
        "rows": sum(p.rows for p in plans),
        "target_rows": target_plan().rows,
        "dataset": dataset,
    }
    if load_only:
        return result
    # Both stopped now (``running`` stops what it started; a server found running is
    # restarted here so its start-up is timed cold).
    for s in (loaded, empty):
        if neo4j_local.status(s).running:
            neo4j_local.stop(s, say)
    with running(loaded, source, say) as loaded_start, running(empty, source, say) as empty_start:
        figures = asyncio.run(measure_phase(loaded, empty, rounds, warmup, say))
    figures["startup_s"] = {
        "loaded": round(loaded_start or 0.0, 2),
        "empty": round(empty_start or 0.0, 2),
    }
    return {**result, **figures, "cpus": os.cpu_count()}
