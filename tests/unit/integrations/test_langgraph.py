"""The LangGraph store (``integrations.langgraph``) against a stub server: what each batch
sends (the fields, the note keys, TTLs in seconds, embed texts, filters) and how the answers
become LangGraph's items. The live server's conformance suite is the integration tier's."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import httpx
import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchItem,
    SearchOp,
)

from palimpsest.client.transport import AsyncTransport, RetryPolicy, Transport
from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.integrations.langgraph import (
    AsyncPalimpsestStore,
    InvalidStoreArgument,
    PalimpsestStore,
)
from palimpsest.notekeys import MAX_EMBED_TEXT_CHARS, note_key

CREATED = "2026-11-30T12:00:00+00:00"
UPDATED = "2026-12-01T08:30:00+00:00"
FIELD = re.compile(r"(a\d+): (\w+)\(")


class Server:
    """Answers each aliased field of a request; records every request's document and variables."""

    def __init__(self, refuse: str | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.notes: dict[str, Any] = {}
        self.refuse = refuse  # an error code to answer every request with

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if self.refuse:
            error = {"message": "no", "extensions": {"code": self.refuse, "field": "filter"}}
            return httpx.Response(200, json={"errors": [error]})
        variables = body["variables"]
        data: dict[str, Any] = {}
        for alias, field in FIELD.findall(body["query"]):
            i = alias[1:]
            data[alias] = self.field(field, i, variables)
        return httpx.Response(200, json={"data": data})

    def field(self, field: str, i: str, variables: dict[str, Any]) -> Any:
        entry = {"createdAt": CREATED, "updatedAt": UPDATED}
        if field == "memory":
            key = variables[f"k{i}"]
            return {"key": key, "value": self.notes[key], **entry} if key in self.notes else None
        if field == "memorySet":
            self.notes[variables[f"k{i}"]] = variables[f"v{i}"]
            return {"key": variables[f"k{i}"]}
        if field == "memoryDelete":
            return {"deleted": self.notes.pop(variables[f"k{i}"], None) is not None}
        if field == "storeSearch":
            hit = {"key": "k", "value": {"text": "found"}, **entry}
            return [{"namespace": ["docs", "a"], "key": "k", "score": 0.75, "entry": hit}]
        if field == "storeNamespaces":
            return [{"labels": ["docs", "a"]}, {"labels": ["docs", "b"]}]
        raise AssertionError(field)


def store(server: Server, **options: Any) -> PalimpsestStore:
    made = PalimpsestStore("http://palimpsest", "tok", **options)
    made.transport.close()
    http = httpx.Client(transport=httpx.MockTransport(server))
    made.transport = Transport("http://palimpsest", "tok", policy=RetryPolicy(), http=http)
    return made


def test_a_put_then_a_get_round_trip_through_the_note_key() -> None:
    server = Server()
    with store(server) as s:
        s.put(("docs", "a/b"), "k1", {"text": "hello"})
        got = s.get(("docs", "a/b"), "k1")
    assert isinstance(got, Item)
    assert (got.namespace, got.key, got.value) == (("docs", "a/b"), "k1", {"text": "hello"})
    assert got.created_at.isoformat() == CREATED
    assert got.updated_at.isoformat() == UPDATED
    put, get = server.requests
    assert put["query"].startswith("mutation Store(")
    assert put["variables"]["k0"] == note_key(("docs", "a/b"), "k1") == "ns/docs/a%2Fb//k1"
    assert put["variables"]["scope"] == "USER"
    assert get["query"].startswith("query Store(")
    assert "fragment E on MemoryEntry" in get["query"]


def test_a_missing_item_is_none_and_a_delete_sends_memory_delete() -> None:
    server = Server()
    with store(server, scope="AGENT") as s:
        assert s.get(("docs",), "nothing") is None
        s.delete(("docs",), "nothing")
    delete = server.requests[1]
    assert "memoryDelete(scope: $scope, key: $k0)" in delete["query"]
    assert delete["variables"] == {"scope": "AGENT", "k0": "ns/docs//nothing"}


def test_ttl_minutes_go_as_whole_seconds_rounded_up() -> None:
    server = Server()
    with store(server) as s:
        s.put(("n",), "a", {"x": 1}, ttl=0.001)
        s.put(("n",), "b", {"x": 1}, ttl=2.5)
        s.put(("n",), "c", {"x": 1})
    assert [r["variables"]["t0"] for r in server.requests] == [1, 150, None]


def test_the_embed_text_follows_the_index_fields() -> None:
    server = Server()
    value = {"text": "alpha", "tags": ["b", " ", "c"], "other": "zzz"}
    with store(server, index={"fields": ["text", "tags[*]"]}) as s:
        s.put(("n",), "a", value)  # the store's fields
        s.put(("n",), "b", value, index=["other"])  # the put's own
        s.put(("n",), "c", value, index=False)  # none
        s.put(("n",), "d", {"text": "x" * (MAX_EMBED_TEXT_CHARS + 5)})  # cut at the limit
    sent = [(r["variables"]["e0"], r["variables"]["x0"]) for r in server.requests]
    assert sent[:3] == [(True, "alpha\nb\nc"), (True, "zzz"), (False, None)]
    assert sent[3] == (True, "x" * MAX_EMBED_TEXT_CHARS)


def test_no_index_embeds_nothing() -> None:
    server = Server()
    with store(server) as s:
        s.put(("n",), "a", {"text": "alpha"})
    assert (server.requests[0]["variables"]["e0"], server.requests[0]["variables"]["x0"]) == (
        False,
        None,
    )


def test_a_batch_groups_consecutive_reads_and_writes_in_chunks_of_eight() -> None:
    server = Server()
    ops: list[Op] = [
        *[PutOp(("n",), f"k{i}", {"i": i}) for i in range(10)],
        *[GetOp(("n",), f"k{i}") for i in range(3)],
        PutOp(("n",), "k0", None),
    ]
    with store(server) as s:
        results = s.batch(ops)
    kinds = [(r["query"].split(" ", 1)[0], r["query"].count(": memory")) for r in server.requests]
    assert kinds == [("mutation", 8), ("mutation", 2), ("query", 3), ("mutation", 1)]
    assert results[:10] == [None] * 10
    assert [r.value for r in results[10:13] if isinstance(r, Item)] == [{"i": k} for k in range(3)]
    assert results[13] is None
    assert "ns/n//k0" not in server.notes


def test_search_sends_its_filter_with_non_finite_numbers_spelled_out() -> None:
    server = Server()
    with store(server) as s:
        hits = s.search(
            ("docs",),
            query="alpha",
            filter={"n": {"$gt": -math.inf, "$lt": math.inf}, "m": [math.nan, 1], "t": "x"},
            limit=3,
            offset=1,
        )
    [hit] = hits
    assert isinstance(hit, SearchItem)
    assert (hit.namespace, hit.key, hit.score, hit.value) == (
        ("docs", "a"),
        "k",
        0.75,
        {"text": "found"},
    )
    variables = server.requests[0]["variables"]
    assert variables["f0"] == {
        "n": {"$gt": "-Infinity", "$lt": "Infinity"},
        "m": ["NaN", 1],
        "t": "x",
    }
    assert (variables["p0"], variables["q0"], variables["l0"], variables["o0"]) == (
        ["docs"],
        "alpha",
        3,
        1,
    )


def test_an_empty_filter_is_sent_as_none() -> None:
    server = Server()
    with store(server) as s:
        s.search(("docs",), filter={})
    assert server.requests[0]["variables"]["f0"] is None


def test_listing_namespaces_sends_the_prefix_suffix_and_depth() -> None:
    server = Server()
    with store(server) as s:
        got = s.list_namespaces(prefix=("docs",), suffix=("b",), max_depth=2, limit=5, offset=0)
        s.batch([ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("x",)),))])
    assert got == [("docs", "a"), ("docs", "b")]
    first, second = (r["variables"] for r in server.requests)
    assert (first["p0"], first["s0"], first["d0"], first["l0"]) == (["docs"], ["b"], 2, 5)
    assert (second["p0"], second["s0"], second["d0"]) == (["x"], None, None)


def test_an_empty_namespace_is_refused_before_any_request() -> None:
    server = Server()
    with store(server) as s, pytest.raises(InvalidNamespaceError):
        s.batch([GetOp(("n",), "a"), GetOp((), "b")])
    assert server.requests == []


def test_the_servers_invalid_argument_is_also_a_value_error_other_refusals_are_not() -> None:
    with (
        store(Server(refuse="INVALID_ARGUMENT")) as s,
        pytest.raises(ValueError, match="no") as caught,
    ):
        s.search(("docs",), filter={"$bad": 1})
    assert isinstance(caught.value, InvalidStoreArgument)
    assert isinstance(caught.value, InvalidArgument)
    assert caught.value.details["field"] == "filter"
    with store(Server(refuse="FORBIDDEN")) as s, pytest.raises(Forbidden) as refused:
        s.get(("docs",), "k")
    assert not isinstance(refused.value, ValueError)


async def test_the_blocking_store_answers_in_a_thread_for_abatch() -> None:
    server = Server()
    with store(server) as s:
        await s.aput(("n",), "a", {"v": 1})
        got = await s.aget(("n",), "a")
    assert got is not None
    assert got.value == {"v": 1}


async def test_the_async_store_sends_the_same_requests() -> None:
    server = Server()
    made = AsyncPalimpsestStore("http://palimpsest", "tok", scope="AGENT")
    await made.aclose()
    http = httpx.AsyncClient(transport=httpx.MockTransport(server))
    made.transport = AsyncTransport("http://palimpsest", "tok", http=http)
    async with made as s:
        await s.aput(("docs",), "k", {"text": "hi"}, ttl=1)
        got = await s.aget(("docs",), "k")
        assert await s.alist_namespaces() == [("docs", "a"), ("docs", "b")]
    assert got is not None
    assert got.value == {"text": "hi"}
    put = server.requests[0]["variables"]
    assert (put["scope"], put["k0"], put["t0"]) == ("AGENT", "ns/docs//k", 60)
    refusing = AsyncPalimpsestStore("http://palimpsest", "tok")
    await refusing.aclose()
    bad = httpx.AsyncClient(transport=httpx.MockTransport(Server(refuse="INVALID_ARGUMENT")))
    refusing.transport = AsyncTransport("http://palimpsest", "tok", http=bad)
    with pytest.raises(InvalidStoreArgument):
        await refusing.abatch([SearchOp(("docs",), filter={"$bad": 1})])
