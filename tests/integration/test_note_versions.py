"""Versioned notes on the real Neo4j: every write keeps the state it replaced, a delete writes
a tombstone, ``knownAt`` reads each past state exactly, concurrent writers of one key form one
linear history, and erasure leaves no version behind."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.jobs.portability import import_from_file
from tests.integration.answers import ok
from tests.integration.conftest import Gql, gql_over
from tests.integration.test_ingest import _cli
from tests.integration.test_mcp import call, http_client

SET = """mutation($k: String!, $v: JSON!, $ttl: Int) {
  memorySet(scope: USER, key: $k, value: $v, ttlSeconds: $ttl) { updatedAt } }"""
DELETE = """mutation($k: String!) { memoryDelete(scope: USER, key: $k) { deleted } }"""
GET = """query($k: String!, $known: Instant) {
  memory(scope: USER, key: $k, knownAt: $known) { value updatedAt } }"""
LIST = """query($known: Instant) {
  memories(scope: USER, knownAt: $known) { items { key value } } }"""
HISTORY = """query($k: String!, $limit: Int, $after: String) {
  memoryHistory(scope: USER, key: $k, limit: $limit, after: $after) {
    items { key value deleted createdAt expiredAt expiresAt provenance { origin } }
    cursor hasMore } }"""
INCREMENT = """mutation($k: String!) { memoryIncrement(scope: USER, key: $k, delta: 1) {
  value } }"""
REDUCERS = """mutation($k: String!) {
  a: memoryMerge(scope: USER, key: $k, value: {a: 1}) { value }
  b: memoryMerge(scope: USER, key: $k, value: {b: 2}) { value } }"""
LISTS = """mutation($k: String!) {
  a: memoryAppendDedupe(scope: USER, key: $k, value: "x") { appended }
  b: memoryAppendDedupe(scope: USER, key: $k, value: "x") { appended }
  c: memoryBoundedList(scope: USER, key: $k, value: "y", limit: 1) { dropped } }"""
ERASE_ME = "mutation { eraseMe { status removed { entries noteVersions } } }"


def history(gql: Gql, who: str, key: str, limit: int = 100) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    after = None
    while True:
        page = ok(gql(HISTORY, who, k=key, limit=limit, after=after))["memoryHistory"]
        items += page["items"]
        if not page["hasMore"]:
            return items
        after = page["cursor"]


def at(stamp: str, micros: int = 0) -> str:
    return (datetime.fromisoformat(stamp) + timedelta(microseconds=micros)).isoformat()


@pytest.fixture
def tenant_user(token: Callable[..., str]) -> tuple[str, str]:
    tenant = f"nv-{uuid.uuid4().hex[:8]}"
    return tenant, token(tenant, "alice", "planner")


@pytest.fixture
def who(tenant_user: tuple[str, str]) -> str:
    return tenant_user[1]


def test_every_past_state_reads_exactly_by_known_at(gql: Gql, who: str) -> None:
    for value in ("one", "two", "three"):
        ok(gql(SET, who, k="home", v=value))
    assert ok(gql(DELETE, who, k="home"))["memoryDelete"]["deleted"] is True

    versions = history(gql, who, "home", limit=3)  # two pages
    assert [(v["value"], v["deleted"]) for v in versions] == [
        (None, True),
        ("three", False),
        ("two", False),
        ("one", False),
    ]
    # One linear history: each version ends exactly when the next begins.
    assert versions[0]["expiredAt"] is None
    for newer, older in pairwise(versions):
        assert older["expiredAt"] == newer["createdAt"]
    tombstone, three, two, one = versions

    def read(known: str) -> Any:
        found = ok(gql(GET, who, k="home", known=known))["memory"]
        return found["value"] if found else None

    assert read(at(one["createdAt"], -1)) is None  # before the first write
    assert read(one["createdAt"]) == "one"
    assert read(at(two["createdAt"], -1)) == "one"
    assert read(two["createdAt"]) == "two"
    assert read(three["createdAt"]) == "three"
    assert read(at(tombstone["createdAt"], -1)) == "three"
    assert read(tombstone["createdAt"]) is None
    assert read("2999-01-01T00:00:00Z") is None  # a knownAt in the future reads the present
    assert ok(gql(GET, who, k="home"))["memory"] is None

    listed = ok(gql(LIST, who, known=two["createdAt"]))["memories"]["items"]
    assert listed == [{"key": "home", "value": "two"}]
    assert ok(gql(LIST, who, known=tombstone["createdAt"]))["memories"]["items"] == []

    # Writing again ends the tombstone; the present reads the new value.
    ok(gql(SET, who, k="home", v="four"))
    newest = history(gql, who, "home")
    assert [v["value"] for v in newest] == ["four", None, "three", "two", "one"]
    assert newest[1]["expiredAt"] == newest[0]["createdAt"]
    assert read(tombstone["createdAt"]) is None
    assert ok(gql(GET, who, k="home"))["memory"]["value"] == "four"


def test_every_reducer_writes_a_version(gql: Gql, who: str) -> None:
    ok(gql(INCREMENT, who, k="n"))
    ok(gql(INCREMENT, who, k="n"))
    ok(gql(REDUCERS, who, k="m"))
    ok(gql(LISTS, who, k="l"))
    assert [v["value"] for v in history(gql, who, "n")] == [2, 1]
    assert [v["value"] for v in history(gql, who, "m")] == [{"a": 1, "b": 2}, {"a": 1}]
    assert [v["value"] for v in history(gql, who, "l")] == [["y"], ["x"], ["x"]]


def test_ttl_expiry_ends_a_version_and_keeps_it(gql: Gql, who: str) -> None:
    ok(gql(SET, who, k="brief", v="soon gone", ttl=1))
    time.sleep(1.3)
    assert ok(gql(GET, who, k="brief"))["memory"] is None
    [expired] = history(gql, who, "brief")
    assert expired["value"] == "soon gone"
    assert expired["expiredAt"] == expired["expiresAt"]
    ok(gql(SET, who, k="brief", v="back"))
    back, kept = history(gql, who, "brief")
    assert (back["value"], kept["value"]) == ("back", "soon gone")
    assert kept["expiredAt"] == kept["expiresAt"] < back["createdAt"]
    assert ok(gql(GET, who, k="brief", known=kept["createdAt"]))["memory"]["value"] == "soon gone"
    assert ok(gql(GET, who, k="brief", known=at(kept["expiresAt"])))["memory"] is None


def test_sixteen_concurrent_writers_make_one_linear_history(
    live_server_url: str, who: str, gql: Gql
) -> None:
    def write(_: int) -> dict[str, Any]:
        with httpx.Client(base_url=live_server_url, timeout=60) as client:
            return ok(gql_over(client)(INCREMENT, who, k="count"))

    with ThreadPoolExecutor(16) as pool:
        done = list(pool.map(write, range(16)))
    assert sorted(d["memoryIncrement"]["value"] for d in done) == list(range(1, 17))

    versions = history(gql, who, "count")
    assert [v["value"] for v in versions] == list(range(16, 0, -1))  # no version lost
    stamps = [v["createdAt"] for v in versions]
    assert stamps == sorted(set(stamps), reverse=True)  # strictly ordered
    for newer, older in pairwise(versions):
        assert older["expiredAt"] == newer["createdAt"]


def test_another_scopes_history_answers_like_a_missing_key(
    gql: Gql, tenant_user: tuple[str, str], token: Callable[..., str]
) -> None:
    tenant, alice = tenant_user
    ok(gql(SET, alice, k="secret", v="alice's"))
    ok(gql(SET, alice, k="secret", v="alice's again"))
    bob = token(tenant, "bob", "planner")
    missing = ok(gql(HISTORY, bob, k="never-written"))
    foreign = ok(gql(HISTORY, bob, k="secret"))
    assert foreign == missing == {"memoryHistory": {"items": [], "cursor": None, "hasMore": False}}
    first = history(gql, alice, "secret")[-1]["createdAt"]
    assert ok(gql(GET, bob, k="secret", known=first))["memory"] is None
    bad = gql(HISTORY, alice, k="secret", after="not-a-cursor")
    assert bad["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"


def test_erasure_leaves_no_version_behind(
    gql: Gql, tenant_user: tuple[str, str], neo4j_driver: Driver
) -> None:
    tenant, who = tenant_user
    for value in ("a", "b", "c"):
        ok(gql(SET, who, k="k", v=value))
    ok(gql(DELETE, who, k="k"))
    ok(gql(SET, who, k="other", v=1))
    key = scope_key(tenant, Scope.USER, "alice")
    versions = "MATCH (v:MemoryVersion) WHERE v.scope_key = $key RETURN count(v) AS n"
    assert neo4j_driver.execute_query(versions, key=key).records[0]["n"] == 4

    receipt = ok(gql(ERASE_ME, who))["eraseMe"]
    assert receipt["status"] == "DONE"
    assert receipt["removed"] == {"entries": 1, "noteVersions": 4}
    # A whole-database scan: no node or relationship of the scope, of any label, is left.
    anything = """MATCH (n) WHERE n.scope_key = $key OR n.owner_id = 'alice' AND n.tenant_id = $t
    RETURN count(n) AS n"""
    assert neo4j_driver.execute_query(anything, key=key, t=tenant).records[0]["n"] == 0


def test_export_and_import_keep_every_version(
    gql: Gql, who: str, settings: Settings, tmp_path: Path
) -> None:
    for value in ("a", "b"):
        ok(gql(SET, who, k="kept", v=value))
    ok(gql(DELETE, who, k="kept"))
    ok(gql(SET, who, k="kept", v="c"))
    ok(gql(INCREMENT, who, k="n"))
    before = {k: history(gql, who, k) for k in ("kept", "n")}
    lines = ok(gql("{ exportMe { lines } }", who))["exportMe"]["lines"]
    assert sum('"kind":"memory_version"' in line for line in lines) == 3

    ok(gql(ERASE_ME, who))
    assert history(gql, who, "kept") == []
    out = tmp_path / "notes.jsonl"
    out.write_text("\n".join(lines) + "\n")
    loaded = asyncio.run(import_from_file(settings, out))
    assert loaded["records"]["memory_version"] == 3

    assert {k: history(gql, who, k) for k in ("kept", "n")} == before
    first = before["kept"][-1]["createdAt"]
    assert ok(gql(GET, who, k="kept", known=first))["memory"]["value"] == "a"
    ok(gql(SET, who, k="kept", v="d"))  # the history goes on where the import left it
    assert [v["value"] for v in history(gql, who, "kept")] == ["d", "c", None, "b", "a"]


async def test_mcp_tools_read_history_and_the_past(live_server_url: str, who: str) -> None:
    async with http_client(live_server_url, who) as client:
        await call(client, "remember", key="prefs/editor", value="vim")
        await call(client, "remember", key="prefs/editor", value="helix")
        found = await call(client, "memory_history", key="prefs/editor", limit=1)
        assert [v["value"] for v in found["versions"]] == ["helix"]
        rest = await call(client, "memory_history", key="prefs/editor", after=found["cursor"])
        [old] = rest["versions"]
        assert old["value"] == "vim"
        assert old["deleted"] is False
        then = await call(client, "memory_get", key="prefs/editor", known_at=old["created_at"])
        assert then["entry"]["value"] == "vim"
        now = await call(client, "memory_get", key="prefs/editor")
        assert now["entry"]["value"] == "helix"
        missing = await call(client, "memory_history", key="prefs/other")
        assert missing == {"versions": [], "cursor": None}


def test_cli_prints_a_keys_history(gql: Gql, who: str, live_server_url: str) -> None:
    ok(gql(SET, who, k="shell/k", v="first"))
    ok(gql(SET, who, k="shell/k", v="second"))
    printed = _cli("memory", "history", "shell/k", run_token=who, url=live_server_url)
    assert printed.returncode == 0, printed.stderr
    versions = json.loads(printed.stdout)
    assert [v["value"] for v in versions] == ["second", "first"]
    first = versions[-1]["created_at"]
    then = _cli("memory", "get", "shell/k", "--known-at", first, run_token=who, url=live_server_url)
    assert then.returncode == 0, then.stderr
    assert json.loads(then.stdout) == "first"


EMBED_SET = """mutation($k: String!, $v: JSON!) {
  memorySet(scope: USER, key: $k, value: $v, embed: true) { updatedAt } }"""
RECALL = """query($q: String!, $when: WhenInput) {
  recall(scope: USER, query: $q, topK: 5, sources: [NOTES, FACTS], when: $when) {
    hits { key text } sourcesApplied appliedFilters { kind filters } } }"""


def test_recall_known_at_finds_the_old_text_and_not_the_new(gql: Gql, who: str) -> None:
    ok(gql(EMBED_SET, who, k="trip", v="Alice flew to Oslo for the fjords"))
    ok(gql(EMBED_SET, who, k="gone", v="Alice kept a parrot named Kiwi"))
    old = {v["createdAt"] for k in ("trip", "gone") for v in history(gql, who, k)}
    ok(gql(EMBED_SET, who, k="trip", v="Alice flew to Kyoto for the temples"))
    ok(gql(DELETE, who, k="gone"))
    then = max(old)

    def texts(query: str, when: dict[str, str] | None) -> list[str]:
        found = ok(gql(RECALL, who, q=query, when=when))["recall"]
        assert found["sourcesApplied"] is True
        return [h["text"] for h in found["hits"]]

    past = texts("where did Alice fly", {"knownAt": then})
    assert any("Oslo" in t for t in past)
    assert not any("Kyoto" in t for t in past)
    assert any("parrot" in t for t in texts("the parrot Kiwi", {"knownAt": then}))
    present = texts("where did Alice fly", None)
    assert any("Kyoto" in t for t in present)
    assert not any("Oslo" in t for t in present)
    assert not any("parrot" in t for t in texts("the parrot Kiwi", None))
    future = texts("where did Alice fly", {"knownAt": "2999-01-01T00:00:00Z"})
    assert not any("Oslo" in t for t in future)

    applied = ok(gql(RECALL, who, q="Alice", when={"knownAt": then}))["recall"]["appliedFilters"]
    assert applied == [
        {"kind": "FACTS", "filters": ["AS_OF", "KNOWN_AT"]},
        {"kind": "NOTES", "filters": ["AS_OF", "KNOWN_AT"]},
    ]
    plain = ok(gql(RECALL, who, q="Alice", when=None))["recall"]["appliedFilters"]
    assert plain == [
        {"kind": "FACTS", "filters": ["AS_OF"]},
        {"kind": "NOTES", "filters": ["AS_OF"]},
    ]
