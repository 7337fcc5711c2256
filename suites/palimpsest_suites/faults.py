"""Faults: SIGKILL Neo4j (or the API) in the middle of batches, then check every batch.

Runs on its OWN managed Neo4j: a separate ``PALIMPSEST_HOME`` (the jars are linked from the
configured home, so nothing is downloaded) and separate Bolt/HTTP ports, and only the process
named by that home's pid file is ever killed, after checking its command line names that
home. The shared development server is never touched.

Each round starts a few writers sending one kind of batch in a loop (``importDocuments`` of 5
documents, ``assertFacts`` of 20 facts, ``sqlExec`` of 10 inserts), kills the target after a
random moment, stops the writers, restarts the target, and then checks by Cypher and by
SQLite that every batch sent is either wholly present or wholly absent (else
``half_written``) and that every acknowledged batch is wholly present (else ``lost``).
Recovery is the time from the kill until ``/readyz`` answers 200 and a write succeeds; for
Neo4j kills the API process is never restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import shutil
import signal
import sqlite3
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neo4j import GraphDatabase

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.local import neo4j as neo4j_local
from palimpsest_suites.figures import percentile
from palimpsest_suites.served import ApiProcess
from palimpsest_suites.wire import WireClient

Say = Callable[[str], None]
KINDS = ("facts", "api-sql", "import", "sql")
WRITERS = 3
SIZES = {"import": 5, "facts": 20, "sql": 10, "api-sql": 10}

IMPORT = """mutation($d: [DocumentInput!]!) {
  importDocuments(scope: USER, documents: $d) { summary { id } } }"""
ASSERT = """mutation($f: [FactInput!]!) {
  assertFacts(scope: USER, facts: $f, place: false) { created } }"""
SQL = """mutation($s: [SqlStatementInput!]!) {
  sqlExec(scope: USER, statements: $s) { results { rowsAffected } } }"""
PROBE = """mutation($k: String!) { memorySet(scope: USER, key: $k, value: 1) { key } }"""

# Bench-only checks on the fault server: rows per batch marker, all batches at once.
COUNT_DOCUMENTS = """
MATCH (d:Document) WHERE d.path STARTS WITH '/faults/'
RETURN split(d.path, '/')[2] AS marker, count(d) AS n"""
WRITABLE = "MERGE (p:FaultProbe {id: 1}) SET p.at = timestamp()"
COUNT_FACTS = """
MATCH ()-[f:FACT]->() WHERE f.natural_key STARTS WITH 'b'
RETURN split(f.natural_key, '-')[0] AS marker, count(f) AS n"""


@dataclass
class Batch:
    kind: str
    marker: str
    acknowledged: bool = False


@dataclass
class Tally:
    kills: int = 0
    batches: list[Batch] = field(default_factory=list)
    lost: int = 0
    half_written: int = 0
    unrecovered: int = 0
    recovery: list[float] = field(default_factory=list)  # kill -> /readyz and a write OK
    restart: list[float] = field(default_factory=list)  # kill -> the process answers again
    api_recovery: list[float] = field(default_factory=list)  # answers again -> serving
    db_writable: list[float] = field(default_factory=list)  # Bolt answers -> a direct write OK
    notes: list[str] = field(default_factory=list)


def fault_settings(home: Path, bolt_port: int, http_port: int) -> Settings:
    shared = Settings()
    if bolt_port == shared.neo4j.bolt_port:
        raise ValueError(f"the fault server must not use the shared Bolt port {bolt_port}")
    return shared.replace(
        home=home,
        neo4j_managed=True,
        neo4j_uri=None,
        neo4j_password=None,
        neo4j_bolt_port=bolt_port,
        neo4j_http_port=http_port,
        neo4j_heap="512m",
        neo4j_pagecache="128m",
        log_level="WARNING",
        rate_limit_per_second=0,
    )


def api_env(s: Settings) -> dict[str, str]:
    return {
        "PALIMPSEST_HOME": str(s.home),
        "PALIMPSEST_NEO4J_MANAGED": "true",
        "PALIMPSEST_NEO4J_BOLT_PORT": str(s.neo4j.bolt_port),
        "PALIMPSEST_NEO4J_HTTP_PORT": str(s.neo4j.http_port),
        "PALIMPSEST_LOG_LEVEL": "WARNING",
        "PALIMPSEST_RATE_LIMIT_PER_SECOND": "0",
    }


def prepare_home(s: Settings, source: Settings, say: Say) -> None:
    """Link the cached jars into the fault home; configure and set its own password."""
    jars = source.neo4j_home / "lib"
    if not (jars / f"neo4j-{source.neo4j.version}.jar").exists():
        raise RuntimeError(f"no Neo4j jars in {jars}: run `palimpsest neo4j install` first")
    s.neo4j_home.mkdir(parents=True, exist_ok=True)
    lib = s.neo4j_home / "lib"
    if not lib.exists():
        lib.symlink_to(jars, target_is_directory=True)
    neo4j_local.install(s, say)


def kill_neo4j(s: Settings) -> None:
    """SIGKILL the fault server, and only it: its pid file, its home on the command line."""
    pid = neo4j_local.status(s).pid
    if pid is None:
        raise RuntimeError("the fault Neo4j is not running")
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    if f"--home-dir={s.neo4j_home}".encode() not in cmdline:
        raise RuntimeError(f"pid {pid} is not the fault server of {s.neo4j_home}; not killing it")
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our child: reap it
                return
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.05)


def judge(tally: Tally, count: Callable[[Batch], int]) -> None:
    """Every batch wholly present or wholly absent; every acknowledged one wholly present."""
    for batch in tally.batches:
        present, size = count(batch), SIZES[batch.kind]
        if 0 < present < size:
            tally.half_written += 1
            tally.notes.append(f"half-written {batch.kind} {batch.marker}: {present}/{size}")
        if batch.acknowledged and present < size:
            tally.lost += 1
            tally.notes.append(f"lost {batch.kind} {batch.marker}: {present}/{size}")


def batch_variables(kind: str, marker: str) -> tuple[str, dict[str, Any]]:
    n = SIZES[kind]
    if kind == "import":
        docs = [
            {
                "markdown": f"# {marker}\n\nFirst {marker} paragraph {i}.\n\nSecond {marker}.\n",
                "path": f"/faults/{marker}/{i}",
            }
            for i in range(n)
        ]
        return IMPORT, {"d": docs}
    if kind == "facts":
        facts = [
            {
                "subject": {"type": "item", "name": f"{marker}-{i}"},
                "predicate": "state",
                "objectValue": "ok",
                "naturalKey": f"{marker}-{i}",
            }
            for i in range(n)
        ]
        return ASSERT, {"f": facts}
    rows = [
        {"statement": "INSERT INTO faults (batch, i) VALUES (?, ?)", "args": [marker, i]}
        for i in range(n)
    ]
    return SQL, {"s": rows}


class Faults:
    def __init__(self, s: Settings, api: ApiProcess, token: str, user: str, tenant: str) -> None:
        self.s, self.api, self.token = s, api, token
        self.sql_file = s.home / "sql" / f"{scope_key(tenant, Scope.USER, user)}.db"
        self.tally = Tally()

    async def writer(self, kind: str, stop: asyncio.Event) -> None:
        client = WireClient.for_url(self.api.url, timeout=30)
        try:
            while not stop.is_set():
                batch = Batch(kind, f"b{secrets.token_hex(6)}")
                self.tally.batches.append(batch)
                query, variables = batch_variables(kind, batch.marker)
                try:
                    reply = await client.post_graphql(query, variables, self.token)
                    body = reply.json()
                    batch.acknowledged = reply.status == 200 and not body.get("errors")
                except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError):
                    await asyncio.sleep(0.05)
                if not batch.acknowledged:
                    await asyncio.sleep(0.05)
        finally:
            await client.close()

    async def round(self, kind: str, rng: random.Random, say: Say) -> None:
        """Kill mid-batch, restart at once (as a supervisor would) while writers keep going."""
        stop = asyncio.Event()
        writers = [asyncio.create_task(self.writer(kind, stop)) for _ in range(WRITERS)]
        await asyncio.sleep(rng.uniform(1.0, 3.0))
        killed = time.monotonic()
        if kind == "api-sql":
            self.api.kill()
        else:
            await asyncio.to_thread(kill_neo4j, self.s)
        self.tally.kills += 1
        await asyncio.sleep(0.2)
        if kind == "api-sql":
            await asyncio.to_thread(self.api.start)
        else:
            await asyncio.to_thread(neo4j_local.start, self.s, lambda _: None)
        back = time.monotonic()
        self.tally.restart.append(back - killed)
        if kind != "api-sql":
            await asyncio.to_thread(self.wait_writable, back + 180)
            self.tally.db_writable.append(time.monotonic() - back)
        if await self.recovered(deadline=back + 180):
            self.tally.recovery.append(time.monotonic() - killed)
            self.tally.api_recovery.append(time.monotonic() - back)
        else:
            self.tally.unrecovered += 1
        stop.set()
        await asyncio.gather(*writers)
        say(
            f"kill {self.tally.kills} ({kind}): restarted in {back - killed:.1f}s, "
            f"serving again {time.monotonic() - back:.1f}s later"
        )

    def wait_writable(self, deadline: float) -> None:
        """Until the database itself takes a write (it may still be recovering its log)."""
        auth = neo4j_local.credentials(self.s)
        with GraphDatabase.driver(
            self.s.bolt_uri, auth=auth, notifications_min_severity="OFF"
        ) as driver:
            while time.monotonic() < deadline:
                try:
                    driver.execute_query(WRITABLE, database_=self.s.neo4j.database)
                    return
                except Exception:  # any failure means not yet
                    time.sleep(0.2)

    async def recovered(self, deadline: float) -> bool:
        """``/readyz`` is 200 and a write through the API succeeds again."""
        client = WireClient.for_url(self.api.url, timeout=10)
        try:
            while time.monotonic() < deadline:
                try:
                    ready = await client.request("GET", "/readyz")
                    if ready.status == 200:
                        reply = await client.post_graphql(PROBE, {"k": "probe"}, self.token)
                        if reply.status == 200 and not reply.json().get("errors"):
                            return True
                except (OSError, asyncio.IncompleteReadError, TimeoutError):
                    pass
                await asyncio.sleep(0.2)
            return False
        finally:
            await client.close()

    def verify(self) -> None:
        """Count every batch's rows in one query per kind, then judge each batch."""
        auth = neo4j_local.credentials(self.s)
        with GraphDatabase.driver(
            self.s.bolt_uri, auth=auth, notifications_min_severity="OFF"
        ) as driver:
            db = self.s.neo4j.database
            docs, _, _ = driver.execute_query(COUNT_DOCUMENTS, database_=db)
            facts, _, _ = driver.execute_query(COUNT_FACTS, database_=db)
        found = {("import", r["marker"]): int(r["n"]) for r in docs}
        found |= {("facts", r["marker"]): int(r["n"]) for r in facts}
        if self.sql_file.exists():
            with contextlib.closing(sqlite3.connect(self.sql_file)) as conn:
                rows = conn.execute("SELECT batch, count(*) FROM faults GROUP BY batch")
                for marker, n in rows:
                    found[("sql", marker)] = int(n)
        judge(self.tally, lambda b: found.get((_table(b.kind), b.marker), 0))


def _table(kind: str) -> str:
    return "sql" if kind == "api-sql" else kind


async def _drive(faults: Faults, kills: int, seed: int, say: Say) -> None:
    setup = WireClient.for_url(faults.api.url)
    try:
        create = [{"statement": "CREATE TABLE IF NOT EXISTS faults (batch TEXT, i INTEGER)"}]
        reply = await setup.post_graphql(SQL, {"s": create}, faults.token)
        if reply.json().get("errors"):
            raise RuntimeError(f"fault set-up failed: {reply.json()['errors'][0]}")
    finally:
        await setup.close()
    rng = random.Random(seed)
    for k in range(kills):
        await faults.round(KINDS[k % len(KINDS)], rng, say)


def run(
    source: Settings,
    kills: int,
    say: Say,
    home: Path | None = None,
    bolt_port: int = 7698,
    http_port: int = 7485,
    seed: int = 1,
    keep: bool = False,
) -> dict[str, Any]:
    started = time.perf_counter()
    made = home is None
    home = home or Path(tempfile.mkdtemp(prefix="palimpsest-faults-"))
    s = fault_settings(home, bolt_port, http_port)
    say(f"fault server: home {home}, bolt {bolt_port}, http {http_port}")
    tenant, user = f"faults-{secrets.token_hex(4)}", "writer"
    # Whatever the environment says, the fault API talks only to the fault server.
    drop = ("PALIMPSEST_NEO4J_URI", "PALIMPSEST_NEO4J_PASSWORD")
    api = ApiProcess(api_env(s), home / "api.log", drop=drop)
    # SIGTERM must run the clean-up below too: never leave the fault server or API behind.
    previous = signal.signal(signal.SIGTERM, _exit_on_term)
    try:
        prepare_home(s, source, say)
        neo4j_local.start(s, say)
        api.start()
        token = mint(load_keys(s), tenant=tenant, user=user, agent="faults", ttl_seconds=7200)
        faults = Faults(s, api, token, user, tenant)
        asyncio.run(_drive(faults, kills, seed, say))
        faults.verify()
    finally:
        api.stop()
        if neo4j_local.status(s).running:
            neo4j_local.stop(s, say)
        if made and not keep:
            shutil.rmtree(home, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)
    t = faults.tally
    by_kind = {k: sum(1 for b in t.batches if b.kind == k) for k in KINDS}
    return {
        "kills": t.kills,
        "acknowledged": sum(1 for b in t.batches if b.acknowledged),
        "lost": t.lost,
        "half_written": t.half_written,
        "recovery_seconds_p95": _p95(t.recovery),
        "recovery_seconds_max": round(max(t.recovery), 1) if t.recovery else None,
        "restart_seconds_p95": _p95(t.restart),
        "api_recovery_seconds_p95": _p95(t.api_recovery),
        "neo4j_writable_seconds_p95": _p95(t.db_writable),
        "unrecovered": t.unrecovered,
        "batches": len(t.batches),
        "batches_by_kind": by_kind,
        "seconds": round(time.perf_counter() - started, 1),
        "notes": t.notes[:20],
    }


def _exit_on_term(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _p95(values: list[float]) -> float | None:
    return round(percentile(values, 95), 1) if values else None
