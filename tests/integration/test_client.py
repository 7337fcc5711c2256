"""The typed client over the real server: notes, the bookmark, refusals as the error tree."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from palimpsest.client import AsyncClient, Client, RetryPolicy, Scope
from palimpsest.client.results import MemoryEntry
from palimpsest.errors import Forbidden, InvalidArgument, Unauthenticated


@pytest.fixture
def client(live_server_url: str, token: Callable[..., str]) -> Iterator[Client]:
    with Client(url=live_server_url, token=token(f"t-{uuid.uuid4().hex[:10]}", "u", "a")) as c:
        yield c


def test_notes_round_trip(client: Client) -> None:
    entry = client.memory_set(Scope.USER, "k/1", {"n": 1, "snake_case": [1, 2]}, ttl_seconds=60)
    assert isinstance(entry, MemoryEntry)
    assert entry.value == {"n": 1, "snake_case": [1, 2]}  # a JSON value is sent as given
    assert entry.expires_at is not None
    assert entry.provenance.agent == "a"
    got = client.memory("USER", "k/1")
    assert got is not None
    assert got.value == entry.value
    assert got.updated_at == entry.updated_at
    client.memory_set(Scope.USER, "k/2", "two")
    page = client.memories(Scope.USER, prefix="k/", limit=1)
    assert [e.key for e in page.items] == ["k/1"]
    assert page.has_more
    assert page.cursor is not None
    rest = client.memories(Scope.USER, prefix="k/", after=page.cursor)
    assert [e.key for e in rest.items] == ["k/2"]
    assert client.memory_delete(Scope.USER, "k/1").deleted
    assert client.memory(Scope.USER, "k/1") is None
    history = client.memory_history(Scope.USER, "k/1")
    assert [v.deleted for v in history.items] == [True, False]
    assert history.items[1].value == entry.value


def test_a_refusal_raises_its_class_with_message_and_details(client: Client) -> None:
    with pytest.raises(InvalidArgument) as bad:
        client.memory_set(Scope.USER, "", 1)
    assert "key" in bad.value.message
    assert client.memories(Scope.USER).items == []  # refused, nothing stored
    with pytest.raises(Forbidden):
        client.memory_set(Scope.GLOBAL, "k", 1)


def test_a_bad_token_raises_unauthenticated(live_server_url: str) -> None:
    with (
        Client(url=live_server_url, token="not-a-token", retry=RetryPolicy(tries=1)) as c,
        pytest.raises(Unauthenticated),
    ):
        c.me()


def test_the_bookmark_is_kept_and_sent(client: Client) -> None:
    assert client.bookmark is None
    client.memory_set(Scope.USER, "b", 1)
    first = client.bookmark
    assert first is not None
    client.memory_set(Scope.USER, "b", 2)
    assert client.bookmark not in (None, first)
    got = client.memory(Scope.USER, "b")
    assert got is not None
    assert got.value == 2


async def test_the_async_client_does_the_same(
    live_server_url: str, token: Callable[..., str]
) -> None:
    async with AsyncClient(
        url=live_server_url, token=token(f"t-{uuid.uuid4().hex[:10]}", "u")
    ) as c:
        await c.memory_set(Scope.USER, "k", [1])
        got = await c.memory(Scope.USER, "k")
        assert got is not None
        assert got.value == [1]
        assert c.bookmark is not None
        with pytest.raises(InvalidArgument):
            await c.memory_set(Scope.USER, "", 1)
