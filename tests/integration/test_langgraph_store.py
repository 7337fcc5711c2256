"""The LangGraph store on the real server: what LangGraph's own tests do not pin down (the
documented key layout, TTL, server-side filters and ranking, coded refusals, scope walls)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime

import pytest
from langgraph.store.base import InvalidNamespaceError, PutOp

from palimpsest.errors import InvalidArgument
from palimpsest.integrations.langgraph import AsyncPalimpsestStore, PalimpsestStore, StoreIndex
from tests.integration.conftest import Gql
from tests.integration.langgraph_conformance import fresh_user

Opener = Callable[..., tuple[PalimpsestStore, str]]

ENTRY = "{ key value expiresAt updatedAt }"
MEMORY = "query($k: String!) { memory(scope: USER, key: $k) " + ENTRY + " }"
MEMORIES = 'query { memories(scope: USER, prefix: "ns/") { items { key } } }'
SEARCH = """query($p: [String!]!, $f: JSON, $l: Int!, $o: Int!) {
  storeSearch(scope: USER, namespacePrefix: $p, filter: $f, limit: $l, offset: $o)
  { namespace key score entry { value } } }"""


@pytest.fixture
def open_store(live_server_url: str, tenant: str, token: Callable[..., str]) -> Iterator[Opener]:
    opened: list[PalimpsestStore] = []

    def make(index: StoreIndex | None = None) -> tuple[PalimpsestStore, str]:
        minted = token(tenant, user=fresh_user())
        store = PalimpsestStore(url=live_server_url, token=minted, scope="USER", index=index)
        opened.append(store)
        return store, minted

    yield make
    for store in opened:
        store.close()


def test_labels_round_trip_under_the_documented_key(open_store: Opener, gql: Gql) -> None:
    store, minted = open_store()
    odd = ("a/b", "100%", "line\n", "*", "ünï cödé", "x//y")
    store.put(odd, "k/%", {"v": 1})
    store.put(("a",), "plain", {"v": 2})

    item = store.get(odd, "k/%")
    assert item is not None
    assert item.namespace == odd
    assert item.key == "k/%"
    assert {i.namespace for i in store.search(("a/b",))} == {odd}
    assert set(store.list_namespaces()) == {odd, ("a",)}
    # The layout docs/reference/langgraph.md describes: ns/<label>/...//<key>, with % / and
    # the control characters as %XX.
    key = "ns/a%2Fb/100%25/line%0A/*/ünï cödé/x%2F%2Fy//k%2F%25"
    assert gql(MEMORY, minted, k=key)["data"]["memory"]["value"] == {"v": 1}
    assert gql(MEMORY, minted, k="ns/a//plain")["data"]["memory"]["value"] == {"v": 2}


def test_forbidden_labels_get_langgraphs_error_and_write_nothing(
    open_store: Opener, gql: Gql
) -> None:
    store, minted = open_store()
    for namespace in [("a.b",), ("ok", ""), ()]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "k", {"v": 1})
        with pytest.raises(InvalidNamespaceError):
            store.batch([PutOp(namespace, "k", {"v": 1})])  # batch checks them too
    with pytest.raises(InvalidNamespaceError):
        store.search(("a.b",))
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=("a.b",))
    assert gql(MEMORIES, minted)["data"]["memories"]["items"] == []


def test_ttl_is_minutes_and_expired_items_are_gone(open_store: Opener, gql: Gql) -> None:
    store, minted = open_store()
    store.put(("t",), "long", {"v": 1}, ttl=2)
    store.put(("t",), "none", {"v": 2})
    store.put(("gone",), "short", {"v": 3}, ttl=0.01)  # 0.6 s, rounded up to 1 s

    long = gql(MEMORY, minted, k="ns/t//long")["data"]["memory"]
    expires, updated = (datetime.fromisoformat(long[f]) for f in ("expiresAt", "updatedAt"))
    assert (expires - updated).total_seconds() == 120
    assert gql(MEMORY, minted, k="ns/t//none")["data"]["memory"]["expiresAt"] is None
    assert store.get(("gone",), "short") is not None
    time.sleep(1.5)
    assert store.get(("gone",), "short") is None
    assert store.search(("gone",)) == []
    assert set(store.list_namespaces()) == {("t",)}


def test_filters_run_on_the_server(open_store: Opener, gql: Gql) -> None:
    store, minted = open_store()
    for i in range(30):
        store.put(("f", f"n{i % 3}"), f"k{i:02}", {"i": i, "tag": "even" if i % 2 else "odd"})

    # One request answers with only the matches: the server skipped the 28 others.
    body = gql(SEARCH, minted, p=["f"], f={"i": {"$gte": 27}, "tag": "even"}, l=10, o=0)
    hits = body["data"]["storeSearch"]
    assert [(h["key"], h["entry"]["value"]["i"]) for h in hits] == [("k27", 27), ("k29", 29)]
    assert hits[0]["namespace"] == ["f", "n0"]
    assert hits[0]["score"] is None
    # limit and offset count matches, not the notes read.
    page = gql(SEARCH, minted, p=["f"], f={"i": {"$lt": 10, "$ne": 4}}, l=2, o=3)
    # (in key order: namespace n0 first, then n1: k00 k03 k06 | k09 k01)
    assert [h["key"] for h in page["data"]["storeSearch"]] == ["k09", "k01"]
    # The store sends its filters there too.
    found = store.search(("f", "n1"), filter={"i": {"$gt": 20}, "tag": "odd"}, limit=5)
    assert [(i.key, i.namespace) for i in found] == [("k22", ("f", "n1")), ("k28", ("f", "n1"))]


def test_an_integer_filter_finds_a_stored_float_of_its_value(open_store: Opener) -> None:
    store, _ = open_store()
    store.put(("big",), "float", {"n": 1e16})
    store.put(("big",), "int", {"n": 10**16})
    store.put(("big",), "other", {"n": 10**16 + 2})
    found = store.search(("big",), filter={"n": 10**16}, limit=10)
    assert sorted(i.key for i in found) == ["float", "int"]
    assert sorted(i.key for i in store.search(("big",), filter={"n": 1e16}, limit=10)) == [
        "float",
        "int",
    ]


def test_every_namespace_that_can_be_written_can_be_searched(open_store: Opener) -> None:
    store, _ = open_store()
    deep = tuple(f"{i % 10}" for i in range(65))
    store.put(deep, "k", {"v": 1})
    assert [i.key for i in store.search(deep)] == ["k"]
    assert [i.namespace for i in store.search(deep[:1])] == [deep]
    assert deep in store.list_namespaces(prefix=deep)


def test_bad_arguments_are_coded_refusals(open_store: Opener, gql: Gql) -> None:
    store, minted = open_store()
    store.put(("b",), "k", {"v": 1})
    for filter_, limit, offset in [
        ({"a b": 1}, 10, 0),
        ({"v": {"$in": [1]}}, 10, 0),
        ({"v..w": 1}, 10, 0),
        (None, 0, 0),
        (None, 1001, 0),
        (None, 10, -1),
    ]:
        [error] = gql(SEARCH, minted, p=["b"], f=filter_, l=limit, o=offset)["errors"]
        assert error["extensions"]["code"] == "INVALID_ARGUMENT", (filter_, limit, offset)
    with pytest.raises(ValueError, match="Invalid filter key") as raised:
        store.search(("b",), filter={"v') OR 1=1 --": 1})
    assert isinstance(raised.value, InvalidArgument)
    with pytest.raises(ValueError, match="maxDepth"):
        store.list_namespaces(max_depth=0)
    assert store.get(("b",), "k") is not None


def test_query_ranks_by_the_servers_embedding(open_store: Opener) -> None:
    store, _ = open_store(StoreIndex(fields=["text"]))
    texts = ["the cat sat on the warm mat", "quarterly revenue grew by ten percent", "rain"]
    for i, text in enumerate(texts):
        store.put(("q",), f"k{i}", {"text": text, "other": "ignored"})
    store.put(("q",), "unindexed", {"text": texts[1]}, index=False)

    hits = store.search(("q",), query="quarterly revenue grew by ten percent", limit=10)
    assert next(h.key for h in hits) == "k1"
    assert hits[0].score is not None
    assert hits[0].score > 0.99
    scores = [h.score for h in hits if h.score is not None]
    assert scores == sorted(scores, reverse=True)
    assert len(scores) == 3
    assert hits[-1].key == "unindexed"
    assert hits[-1].score is None
    filtered = store.search(("q",), query="cat", filter={"text": "rain"})
    assert [h.key for h in filtered] == ["k2"]


def test_another_scope_sees_nothing(open_store: Opener) -> None:
    mine, _ = open_store()
    theirs, _ = open_store()
    mine.put(("private", "notes"), "k", {"secret": 1})
    assert theirs.get(("private", "notes"), "k") is None
    assert theirs.search(("private",)) == []
    assert theirs.search((), filter={"secret": 1}) == []
    assert theirs.list_namespaces() == []
    theirs.delete(("private", "notes"), "k")  # a foreign key deletes nothing
    assert mine.get(("private", "notes"), "k") is not None


async def test_async_store_batches_in_order(
    live_server_url: str, tenant: str, token: Callable[..., str]
) -> None:
    minted = token(tenant, user=fresh_user())
    async with AsyncPalimpsestStore(url=live_server_url, token=minted) as store:
        await store.aput(("a",), "k", {"v": 1}, ttl=1)
        results = await store.abatch(
            [PutOp(("a",), "k", {"v": 2}), PutOp(("a",), "k", None), PutOp(("a",), "j", {"v": 3})]
        )
        assert results == [None, None, None]
        assert await store.aget(("a",), "k") is None
        item = await store.aget(("a",), "j")
        assert item is not None
        assert item.value == {"v": 3}
        with pytest.raises(InvalidNamespaceError):
            await store.aput(("a.b",), "k", {"v": 1})


async def test_the_sync_store_answers_async_calls_too(open_store: Opener) -> None:
    store, _ = open_store()
    await store.aput(("s",), "k", {"v": 1})
    item = await store.aget(("s",), "k")
    assert item is not None
    assert item.value == {"v": 1}
    assert await store.alist_namespaces() == [("s",)]
