"""Open-loop load: a mixed workload from many principals at a fixed arrival rate.

The API runs as its own uvicorn process (as deployed) on the configured Neo4j. Each principal
(a user with an agent, in one of two fresh tenants) first gets a few notes, a document, facts
and a SQL table; then requests arrive every 1/rate seconds whatever the server's speed
(open loop: a slow server is not excused by the client waiting), each a random operation of
a random principal. Latency is measured from the moment a request was due, so queueing in
the client counts against the server. Errors are any non-200 reply or a reply with errors.

``workers`` > 1 runs each API process as that many uvicorn workers on one port (the event
loop of one Python process is the first limit). ``replicas`` > 1 starts that many API
processes on the same Neo4j and SQL backend (use ``PALIMPSEST_SQL_BACKEND=postgres``:
SQLite files are one host's) and sends the requests to them in turn. Afterwards every
principal's reads (notes, SQL rows, facts, recall) are asked of every replica and compared:
``answers_identical`` and ``answer_mismatches`` report it. The SQL statements are the same on
both backends (an upsert, not SQLite's ``INSERT OR REPLACE``). ``by_minute`` gives the
figures of each minute of the run. ``profile`` adds where the CPU went (``load_profile``).
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, mint
from palimpsest_bench import load_profile as prof
from palimpsest_bench import load_readers as readers
from palimpsest_bench.load_figures import Results, summary
from palimpsest_bench.recall_load import cpu_steal_seconds
from palimpsest_suites.served import ApiProcess, free_port
from palimpsest_suites.wire import WireClient

Say = Callable[[str], None]
UPSERT = "INSERT INTO notes (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v"
# What every replica must answer the same, per principal, once the load has stopped.
CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("query($k: String!) { memory(scope: USER, key: $k) { value } }", {"k": "note/0"}),
    ('{ memories(scope: USER, prefix: "load/", limit: 100) { items { key value } } }', {}),
    ('{ sqlQuery(scope: USER, statement: "SELECT k, v FROM notes ORDER BY k") { rows } }', {}),
    ("{ facts(scope: USER, limit: 100) { items { text } } }", {}),
    (
        "query($q: String!) { recall(scope: USER, query: $q, topK: 5) { hits { id kind score } } }",
        {"q": "what did we decide about billing"},
    ),
]
TOPICS = ["billing", "deploys", "oncall", "travel", "hiring", "pricing", "search", "backups"]

OPS: dict[str, tuple[int, str]] = {
    # name: (weight, GraphQL document)
    "recall": (
        10,
        "query($q: String!) { recall(scope: USER, query: $q, topK: 5) { hits { id } } }",
    ),
    "search": (
        10,
        "query($q: String!) { search(scope: USER, query: $q, topK: 5) { hits { id } } }",
    ),
    "kv_read": (30, "query($k: String!) { memory(scope: USER, key: $k) { value } }"),
    "kv_write": (
        15,
        "mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v) { key } }",
    ),
    "fact_write": (
        10,
        "mutation($f: [FactInput!]!) { assertFacts(scope: USER, facts: $f, place: false) "
        "{ created } }",
    ),
    "sql_read": (
        15,
        'query($a: JSON) { sqlQuery(scope: USER, statement: "SELECT v FROM notes WHERE k = ?", '
        "args: $a) { rows } }",
    ),
    "sql_write": (
        10,
        "mutation($s: [SqlStatementInput!]!) { sqlExec(scope: USER, statements: $s) "
        "{ results { rowsAffected } } }",
    ),
}


def variables(op: str, rng: random.Random) -> dict[str, Any]:
    topic = rng.choice(TOPICS)
    match op:
        case "recall" | "search":
            return {"q": f"what did we decide about {topic}"}
        case "kv_read":
            return {"k": f"note/{rng.randrange(5)}"}
        case "kv_write":
            return {"k": f"load/{rng.randrange(50)}", "v": {"topic": topic, "n": rng.random()}}
        case "fact_write":
            subject = {"type": "project", "name": f"{topic}-{rng.randrange(1000)}"}
            return {"f": [{"subject": subject, "predicate": "owned by", "objectValue": "team"}]}
        case "sql_read":
            return {"a": [rng.randrange(20)]}
        case _:
            k, v = rng.randrange(200), secrets.token_hex(8)
            statement = UPSERT
            return {"s": [{"statement": statement, "args": [k, v]}]}


class Pool:
    """Idle keep-alive connections; a request takes one or opens another."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.idle: list[WireClient] = []
        self.opened = 0

    async def call(self, query: str, variables: dict[str, Any], token: str) -> tuple[bool, str]:
        reused = bool(self.idle)
        client = self.idle.pop() if reused else self._open()
        try:
            reply = await client.post_graphql(query, variables, token)
        except (OSError, asyncio.IncompleteReadError) as e:
            if not reused:
                return False, type(e).__name__
            # The server closed this idle keep-alive connection (uvicorn does after 5 s):
            # the request never reached it, so send it once more on a new connection.
            await client.close()
            client = self._open()
            try:
                reply = await client.post_graphql(query, variables, token)
            except (OSError, asyncio.IncompleteReadError, TimeoutError) as again:
                return False, type(again).__name__
        except TimeoutError as e:
            return False, type(e).__name__
        self.idle.append(client)
        if reply.status != 200:
            return False, f"HTTP {reply.status}"
        body = reply.json()
        if body.get("errors"):
            return False, str(body["errors"][0].get("extensions", {}).get("code"))
        return True, ""

    def _open(self) -> WireClient:
        self.opened += 1
        return WireClient.for_url(self.url, timeout=30)

    async def close(self) -> None:
        for c in self.idle:
            await c.close()


async def seed(pool: Pool, token: str, rng: random.Random) -> None:
    """A few notes, a document, facts and a SQL table for one principal."""
    calls: list[tuple[str, dict[str, Any]]] = []
    set_note = (
        "mutation($k: String!, $v: JSON!, $e: Boolean!) "
        "{ memorySet(scope: USER, key: $k, value: $v, embed: $e) { key } }"
    )
    for i in range(5):
        calls.append((set_note, {"k": f"note/{i}", "v": f"we decided {TOPICS[i]}", "e": i < 3}))
    markdown = "# Decisions\n\n" + "\n\n".join(f"About {t}: we chose plan {t}." for t in TOPICS)
    import_doc = (
        "mutation($m: String!) { importDocument(scope: USER, markdown: $m) { chunks { id } } }"
    )
    calls.append((import_doc, {"m": markdown}))
    calls.append((OPS["fact_write"][1], variables("fact_write", rng)))
    rows: list[dict[str, Any]] = [
        {"statement": "CREATE TABLE IF NOT EXISTS notes (k INTEGER PRIMARY KEY, v TEXT)"}
    ]
    rows += [{"statement": UPSERT, "args": [k, f"v{k}"]} for k in range(20)]
    calls.append((OPS["sql_write"][1], {"s": rows}))
    for query, v in calls:
        ok, why = await pool.call(query, v, token)
        if not ok:
            raise RuntimeError(f"seeding failed: {why}")


async def drive(
    urls: list[str],
    tokens: list[str],
    rate: float,
    seconds: float,
    rng: random.Random,
    profiler: prof.Profiler | None = None,
) -> tuple[Results, float]:
    pools = [Pool(url) for url in urls]
    results = Results()
    names = list(OPS)
    weights = [OPS[n][0] for n in names]
    loop = asyncio.get_running_loop()
    pending: set[asyncio.Task[None]] = set()

    async def one(op: str, due: float, token: str, v: dict[str, Any], pool: Pool) -> None:
        ok, why = await pool.call(OPS[op][1], v, token)
        latency = (loop.time() - due) * 1000
        results.latencies.setdefault(op, []).append(latency)
        results.timeline.append((due - started, latency, ok, op))
        if not ok:
            results.errors[op] = results.errors.get(op, 0) + 1
            if len(results.examples) < 10:
                results.examples.append(f"{op}: {why}")

    started = loop.time()

    async def watch_steal() -> None:
        while (stolen := cpu_steal_seconds()) is not None:
            results.steal.append((loop.time() - started, stolen))
            await asyncio.sleep(STEAL_SAMPLE_SECONDS)

    watcher = asyncio.create_task(watch_steal())
    marker = None
    if profiler is not None:
        await profiler.mark(0.0)
        clock = lambda: loop.time() - started  # noqa: E731
        marker = asyncio.create_task(profiler.every(60.0, seconds, clock))
    for i in range(int(rate * seconds)):
        due = started + i / rate
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        op = rng.choices(names, weights)[0]
        pool = pools[i % len(pools)]  # the replicas in turn, as a round-robin balancer would
        task = asyncio.create_task(one(op, due, rng.choice(tokens), variables(op, rng), pool))
        pending.add(task)
        task.add_done_callback(pending.discard)
    await asyncio.gather(*pending)
    watcher.cancel()
    if profiler is not None and marker is not None:
        await marker  # its boundaries are all past: it has marked them or is marking the last
        await profiler.mark(loop.time() - started)
    if (stolen := cpu_steal_seconds()) is not None:
        results.steal.append((loop.time() - started, stolen))
    elapsed = loop.time() - started
    for pool in pools:
        await pool.close()
    return results, elapsed


async def compare(urls: list[str], tokens: list[str]) -> int:
    """How many (principal, read) answers differ between the replicas."""
    mismatches = 0
    for token in tokens:
        for query, v in CHECKS:
            bodies = [await _ask(url, query, v, token) for url in urls]
            if any("errors" in b for b in bodies) or any(b != bodies[0] for b in bodies):
                mismatches += 1
    return mismatches


async def _ask(url: str, query: str, v: dict[str, Any], token: str) -> Any:
    # A connection per question: a kept-alive one may be closed by the server meanwhile.
    client = WireClient.for_url(url, timeout=120)
    try:
        return (await client.post_graphql(query, v, token)).json()
    finally:
        await client.close()


STEAL_SAMPLE_SECONDS = 1.0


def run(
    settings: Settings,
    rate: float,
    seconds: float,
    principals: int,
    seed_value: int,
    say: Say,
    replicas: int = 1,
    workers: int = 1,
    profile: prof.Profile | None = None,
    env: dict[str, str] | None = None,
    drop: tuple[str, ...] = (),
) -> dict[str, Any]:
    """``env``/``drop``: environment variables the API processes get or lose (a Neo4j of the
    bench's own: ``faults.api_env``)."""
    rng = random.Random(seed_value)
    keys = load_keys(settings)
    tenants = [f"load-{secrets.token_hex(4)}" for _ in range(2)]
    tokens = [
        mint(keys, tenant=tenants[i % 2], user=f"user{i}", agent="loader", ttl_seconds=7200)
        for i in range(principals)
    ]
    log = Path(tempfile.gettempdir()) / f"palimpsest-load-{os.getpid()}.log"
    # The statement histograms come from the API's metrics listener: one per process, so
    # only when each API process is one worker (uvicorn's workers would share the port).
    metrics = [free_port() if profile and workers == 1 else None for _ in range(replicas)]
    apis = [
        ApiProcess(
            {"PALIMPSEST_LOG_LEVEL": "WARNING"}
            | (env or {})
            | ({"PALIMPSEST_METRICS_PORT": str(port)} if port else {}),
            log,
            drop=drop,
            workers=workers,
        )
        for port in metrics
    ]
    mismatches = None
    profiled: dict[str, Any] = {}
    try:
        for api in apis:
            say(f"starting an API process on port {api.port} (log {log}) ...")
            api.start()
        urls = [api.url for api in apis]
        say(f"seeding {principals} principals ...")
        asyncio.run(_seed_all(urls[0], tokens, rng))
        profiler = None
        if profile is not None:
            pids = [a.process.pid for a in apis if a.process is not None]
            cpu = readers.CpuReader(prof.process_groups(settings, pids))
            say(f"profile: idle CPU for {profile.idle_seconds:g}s ...")
            idle_before = asyncio.run(prof.idle_rate(cpu, profile.idle_seconds))
            # Replica 0's statements: with replicas, the others ran the same mix.
            url = f"http://127.0.0.1:{metrics[0]}/metrics" if metrics[0] else None
            profiler = prof.Profiler(cpu, url)
        load_before = os.getloadavg()
        say(f"open loop: {rate:g} requests/s for {seconds:g}s over {replicas} replica(s) ...")
        started = time.perf_counter()
        results, elapsed = asyncio.run(drive(urls, tokens, rate, seconds, rng, profiler))
        say(f"done in {time.perf_counter() - started:.1f}s")
        load_after = os.getloadavg()
        if profile is not None and profiler is not None:
            idle_after = asyncio.run(prof.idle_rate(profiler.cpu, profile.idle_seconds))
            say(
                f"profile: each operation alone, {profile.slice_rate:g}/s for "
                f"{profile.slice_seconds:g}s ..."
            )
            slices = asyncio.run(
                _slices(
                    urls[0], tokens, profiler.cpu, profile, idle_after, random.Random(seed_value)
                )
            )
            profiled = {
                "idle_before": idle_before,
                "idle_after": idle_after,
                "profiler": profiler,
                "slices": slices,
            }
        if replicas > 1:
            say("asking every replica the same reads ...")
            mismatches = asyncio.run(compare(urls, tokens))
    finally:
        for api in apis:
            api.stop()
    out = summary(results, elapsed, rate, seconds)
    if profiled:
        prof.add_profile(out, profiled, {op: w for op, (w, _) in OPS.items()}, seconds)
    return {
        **out,
        "principals": principals,
        "replicas": replicas,
        "workers": workers,
        "embedding_cache_size": settings.embedding.cache_size,
        "sql_backend": settings.sql.backend,
        "answers_identical": None if mismatches is None else mismatches == 0,
        "answer_mismatches": mismatches,
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
    }


async def _seed_all(url: str, tokens: list[str], rng: random.Random) -> None:
    pool = Pool(url)
    try:
        for token in tokens:
            await seed(pool, token, rng)
    finally:
        await pool.close()


async def _slices(
    url: str,
    tokens: list[str],
    cpu: readers.CpuReader,
    profile: prof.Profile,
    idle: dict[str, float],
    rng: random.Random,
) -> dict[str, dict[str, Any]]:
    pool = Pool(url)

    async def send(op: str) -> bool:
        ok, _ = await pool.call(OPS[op][1], variables(op, rng), rng.choice(tokens))
        return ok

    try:
        return await prof.operation_slices(
            cpu,
            sorted(OPS),
            send,
            profile.slice_rate,
            profile.slice_seconds,
            profile.idle_seconds,
            idle,
        )
    finally:
        await pool.close()
