"""The consolidator workers ``palimpsest serve`` runs itself (``PALIMPSEST_SERVE_CONSOLIDATORS``):
a harvested span becomes memory with no ``palimpsest consolidate``, a harvest wakes them, a
server stopped or killed mid-batch loses nothing, and ``/readyz`` and ``pendingWork`` say
how many run and how old the oldest queued span is.

The suite's own servers run no workers (conftest.py): each test here starts the servers it
needs, so no worker of this module outlives it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from palimpsest.config import Settings
from palimpsest.server import serve_in_thread
from tests.integration.answers import ok
from tests.integration.conftest import Gql, gql_over
from tests.integration.cycle import harvest

SEARCH = """query($q: String!) { search(scope: USER, query: $q, topK: 5, sources: [DOCUMENTS]) {
  hits { id text } } }"""
PENDING = """{ pendingWork { queued leased done dead oldestQueuedSeconds consolidators } }"""
TURNS = """{ documents(scope: USER, pathPrefix: "/conversations/") { items { chunkCount } } }"""
# Long enough that an idle worker woken by nothing but its poll would miss every deadline.
SLOW_POLL = 60.0


def served(settings: Settings, **changes: Any) -> Settings:
    return settings.replace(**{"serve_consolidators": 1, **changes})


@contextmanager
def server(settings: Settings) -> Iterator[tuple[httpx.Client, Gql]]:
    with serve_in_thread(settings) as url, httpx.Client(base_url=url, timeout=60) as http:
        yield http, gql_over(http)


def user_token(token: Callable[..., str], tenant: str) -> str:
    return str(token(tenant, f"u-{uuid.uuid4().hex[:8]}", "planner", run="r1"))


def pending(gql: Gql, who: str) -> dict[str, Any]:
    work: dict[str, Any] = ok(gql(PENDING, who))["pendingWork"]
    return work


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> float:
    """Seconds until ``check()`` held; fails after ``seconds``."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < seconds, f"not within {seconds} s: {what}"
        time.sleep(0.05)
    return time.monotonic() - start


def turn_count(gql: Gql, who: str) -> int:
    return sum(d["chunkCount"] for d in ok(gql(TURNS, who))["documents"]["items"])


def test_a_harvested_span_is_found_by_search_with_no_consolidate_command(
    settings: Settings, token: Callable[..., str], tenant: str
) -> None:
    who = user_token(token, tenant)
    text = f"The kestrel nests on the old water tower by harbour {uuid.uuid4().hex[:6]}."
    with server(served(settings, consolidate_poll_seconds=SLOW_POLL)) as (http, gql):
        time.sleep(0.5)  # the worker has looked once, found nothing, and sleeps its poll
        [span] = harvest(gql, who, [text])

        def found() -> bool:
            hits = ok(gql(SEARCH, who, q=text))["search"]["hits"]
            return any(h["id"] == span for h in hits)

        # Woken by the harvest: a poll-only worker would sleep SLOW_POLL seconds first.
        assert wait_for(found, 10, "the harvested turn in search") < 10
        work = pending(gql, who)
        assert (work["queued"], work["leased"], work["done"], work["dead"]) == (0, 0, 1, 0)
        assert work["consolidators"] == 1
        assert work["oldestQueuedSeconds"] is None
        ready = http.get("/readyz")
        assert ready.status_code == 200
        assert ready.json()["consolidators"]["workers"] == 1


def test_zero_runs_no_worker_and_readyz_and_pending_work_say_so(
    gql: Gql, http: httpx.Client, token: Callable[..., str], tenant: str
) -> None:
    """The suite's server runs none (``PALIMPSEST_SERVE_CONSOLIDATORS=0``): the span waits,
    and both doors give its age."""
    who = user_token(token, tenant)
    harvest(gql, who, ["A span no worker of this server will take."])
    time.sleep(1.2)  # older than /readyz's cached count
    work = pending(gql, who)
    assert (work["queued"], work["done"], work["consolidators"]) == (1, 0, 0)
    assert work["oldestQueuedSeconds"] >= 1.0
    body = http.get("/readyz").json()
    assert body["status"] == "ready"
    cycle = body["consolidators"]
    assert cycle["workers"] == 0
    # Every tenant's queue: at least as old as this user's span.
    assert cycle["oldestQueuedSeconds"] >= 1.0


def test_a_server_stopped_mid_batch_finishes_or_hands_back_what_it_leased(
    settings: Settings, gql: Gql, token: Callable[..., str], tenant: str
) -> None:
    who = user_token(token, tenant)
    texts = [f"Turn {i}: the ferry to the island leaves at {i % 24:02d}:15." for i in range(300)]
    # Long leases: a batch the stopping server neither wrote nor released would show leased.
    slow = served(settings, consolidate_batch_size=5, consolidate_lease_seconds=600)
    with server(slow) as (_, served_gql):
        harvest(served_gql, who, texts)
        wait_for(lambda: pending(gql, who)["done"] > 0, 60, "a first batch written")
    work = pending(gql, who)
    assert work["leased"] == 0, work
    assert work["queued"] > 0, "the server finished everything before it was stopped"
    assert work["done"] + work["queued"] == len(texts)
    assert work["dead"] == 0
    # Another server's worker takes the rest; every turn is written once.
    with server(served(settings)) as (_, taker):
        wait_for(lambda: pending(taker, who)["done"] == len(texts), 120, "every span done")
    assert turn_count(gql, who) == len(texts)


def test_a_server_killed_mid_batch_loses_nothing(
    settings: Settings, gql: Gql, token: Callable[..., str], tenant: str
) -> None:
    who = user_token(token, tenant)
    texts = [
        f"Line {i}: the lighthouse keeper logged wind from the {i % 8} quarter." for i in range(300)
    ]
    lease = 3
    env = {
        **os.environ,
        "PALIMPSEST_SERVE_CONSOLIDATORS": "1",
        "PALIMPSEST_CONSOLIDATE_BATCH_SIZE": "5",
        "PALIMPSEST_CONSOLIDATE_LEASE_SECONDS": str(lease),
        "PALIMPSEST_WARMUP_SECONDS": "0",
    }
    with _serve_process(env) as url, httpx.Client(base_url=url, timeout=60) as http:
        killed_gql = gql_over(http)
        harvest(killed_gql, who, texts)

        def mid_batch() -> bool:
            work = pending(gql, who)
            return bool(work["done"] > 0 and work["leased"] > 0)

        wait_for(mid_batch, 60, "the killed server holding a lease after a first batch")
    # SIGKILLed above: no shutdown ran, its lease is left to expire.
    work = pending(gql, who)
    assert work["done"] < len(texts)
    quick = served(settings, consolidate_lease_seconds=lease, consolidate_poll_seconds=0.5)
    with server(quick) as (_, taker):
        wait_for(lambda: pending(taker, who)["done"] == len(texts), 120, "every span done")
    work = pending(gql, who)
    assert (work["queued"], work["leased"], work["dead"]) == (0, 0, 0)
    assert turn_count(gql, who) == len(texts)


@contextmanager
def _serve_process(env: dict[str, str]) -> Iterator[str]:
    """``palimpsest serve`` as its own process, SIGKILLed on exit (never shut down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    palimpsest = Path(sys.executable).parent / "palimpsest"
    process = subprocess.Popen(
        [str(palimpsest), "serve", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            assert process.poll() is None, "serve exited early"
            try:
                return httpx.get(f"{url}/readyz", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, 120, "palimpsest serve ready")
        yield url
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
