"""Bookmarks an attacker can send (cypher/driver/causal.py, executor): a forged one is refused at
once, an unreachable one is waited for only briefly and refused with a code, and the header
tells a tenant nothing about anyone else's writes."""

from __future__ import annotations

import asyncio
import base64
import struct
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from neo4j import Driver

from palimpsest.cypher.driver import causal
from palimpsest.cypher.driver.executor import CrossScopeStatement, Database, Neo4jExecutor
from palimpsest.errors import InvalidArgument, Unavailable
from palimpsest.resolvers.services import Services

READ = 'query { memory(scope: USER, key: "k") { value } }'
WRITE = 'mutation { memorySet(scope: USER, key: "k", value: 1) { key } }'
ONE = CrossScopeStatement("TEST_ONE", "RETURN 1 AS one")
# Under the server's own default (30 s) and the client's timeouts below, over our limit.
STALL = 10.0


def raised(bookmark: str, by: int) -> str:
    """A Neo4j bookmark with its transaction id raised: ``FB:`` + packstream
    ``[bytes(16) database id, int tx id, []]``, the int re-encoded as INT_64."""
    kind, _, b64 = bookmark.partition(":")
    raw = base64.b64decode(b64 + "=" * (-len(b64) % 4))
    assert raw[:3] == b"\x91\xcc\x10", raw  # a one-element list holding 16 bytes
    head, rest = raw[:19], raw[19:]
    marker = rest[0]
    if marker < 0x80:  # TINY_INT
        tx, tail = marker, rest[1:]
    else:
        size = {0xC8: 1, 0xC9: 2, 0xCA: 4, 0xCB: 8}[marker]
        tx = int.from_bytes(rest[1 : 1 + size], "big", signed=True)
        tail = rest[1 + size :]
    forged = head + b"\xcb" + struct.pack(">q", tx + by) + tail
    return f"{kind}:{base64.b64encode(forged).decode()}"


def latest_bookmark(driver: Driver) -> str:
    with driver.session(database="neo4j") as session:
        session.run("RETURN 1").consume()
        (bookmark,) = session.last_bookmarks().raw_values
    return bookmark


def post(http: httpx.Client, token: str, query: str, bookmark: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    if bookmark is not None:
        headers[causal.HEADER] = bookmark
    return http.post("/graphql", json={"query": query}, headers=headers, timeout=STALL)


def test_a_forged_raw_bookmark_is_refused_at_once(
    http: httpx.Client, token: Callable[..., str], tenant: str, neo4j_driver: Driver
) -> None:
    alice = token(tenant, "bm-alice", "planner")
    forged = raised(latest_bookmark(neo4j_driver), 10**9)
    for query in (READ, WRITE):
        started = time.monotonic()
        response = post(http, alice, query, forged)
        assert time.monotonic() - started < 2
        assert response.status_code == 400
        assert response.json()["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"


def test_a_sealed_bookmark_opens_only_unchanged_and_for_its_own_caller(
    http: httpx.Client, token: Callable[..., str], tenant: str
) -> None:
    alice = token(tenant, "bm-alice2", "planner")
    written = post(http, alice, WRITE)
    sealed = written.headers[causal.HEADER]
    assert post(http, alice, READ, sealed).json()["data"]["memory"]["value"] == 1

    flipped = sealed[:-3] + ("A" if sealed[-3] != "A" else "B") + sealed[-2:]
    refusals = [
        post(http, alice, READ, flipped),
        post(http, token(tenant, "bm-bob", "planner"), READ, sealed),  # another user
        post(http, token(tenant, "bm-alice2", "other"), READ, sealed),  # another agent
        post(http, token(f"{tenant}-b", "bm-alice2", "planner"), READ, sealed),  # tenant
        post(http, alice, READ, "FB:kcwQAAAAAAAAAAAAAAAAAAAAAAAAAAAAkA"),
    ]
    bodies = {r.text for r in refusals}
    assert len(bodies) == 1, "every refusal is the same, whatever the cause"
    assert {r.status_code for r in refusals} == {400}
    assert refusals[0].json()["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"


def test_the_header_does_not_count_another_tenants_writes(
    http: httpx.Client, token: Callable[..., str], tenant: str, neo4j_driver: Driver
) -> None:
    watcher = token(f"{tenant}-w", "bm-watcher", "planner")
    writer = token(tenant, "bm-writer", "planner")
    before = post(http, watcher, READ).headers.get(causal.HEADER)
    for _ in range(7):
        assert "errors" not in post(http, writer, WRITE).json()
    after = post(http, watcher, READ).headers.get(causal.HEADER)
    database_bookmark = latest_bookmark(neo4j_driver)
    for header in (before, after):
        # no raw Neo4j bookmark, and nothing of the database's id or transaction in it
        assert header is None or not header.startswith("FB:")
        assert header is None or database_bookmark.split(":")[1][:20] not in header
    if before is not None and after is not None:
        assert len(before) == len(after)


async def test_an_unreachable_bookmark_is_waited_for_briefly_and_never_retried(
    svc: Services, neo4j_driver: Driver
) -> None:
    executor = svc.db.executor
    assert isinstance(executor, Neo4jExecutor)
    db = Database(Neo4jExecutor(executor.driver, executor.database, bookmark_wait=1.0))
    forged = raised(latest_bookmark(neo4j_driver), 10**9)
    for write in (False, True):
        with causal.request_scope({forged}):
            started = time.monotonic()
            with pytest.raises(Unavailable) as refused:
                await (db.write(ONE) if write else db.read(ONE))
            waited = time.monotonic() - started
        assert refused.value.details["limit"] == "bookmarkWait"
        assert waited < 2.5, f"one wait of about 1 s, no retries ({waited:.1f} s)"
    # the pool's connections are fine afterwards, for a request without bookmarks
    assert await asyncio.wait_for(db.read(ONE), 5) == [{"one": 1}]


async def test_a_bookmark_of_a_database_neo4j_does_not_know_is_invalid(svc: Services) -> None:
    with (
        causal.request_scope({"FB:kcwQAAAAAAAAAAAAAAAAAAAAAAAAAAAAkA"}),
        pytest.raises(InvalidArgument),
    ):
        await svc.db.read(ONE)
