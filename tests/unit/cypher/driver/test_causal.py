"""Bookmarks between requests: sealed for one caller, opened only unchanged and by that
caller, and how a request's set moves on."""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import replace

import pytest

from palimpsest.cypher.driver.causal import (
    MAX_BOOKMARKS,
    BookmarkSeal,
    Causal,
    bind_tenant,
    current,
    request_scope,
)
from palimpsest.errors import InvalidArgument
from tests.unit.principals import principal

SEAL = BookmarkSeal(os.urandom(32))
ALICE = principal()


def test_a_sealed_header_opens_to_the_bookmarks_it_holds() -> None:
    bookmarks = {"FB:kcwQK/4b/GkHQx2UfOYSDgqIGckBBZA=", "FB:other"}
    sealed = SEAL.seal(bookmarks, ALICE)
    assert SEAL.open(sealed, ALICE) == bookmarks
    assert SEAL.open(None, ALICE) == set()
    assert SEAL.open("  ", ALICE) == set()


def test_a_header_says_nothing_of_what_it_holds() -> None:
    small = SEAL.seal({"FB:kcwQK/4b/GkHQx2UfOYSDgqIGckBBZA="}, ALICE)
    large = SEAL.seal({"FB:kcwQK/4b/GkHQx2UfOYSDgqIGcsAAAAAO5rKBZA="}, ALICE)
    assert len(small) == len(large), "padded: the length does not follow the transaction id"
    assert "FB:" not in small
    assert SEAL.seal({"FB:x"}, ALICE) != SEAL.seal({"FB:x"}, ALICE), "a fresh nonce each time"


@pytest.mark.parametrize(
    "other",
    [
        replace(ALICE, user_id="bob"),
        replace(ALICE, agent_name="writer"),
        replace(ALICE, tenant_id="globex"),
        replace(ALICE, user_id=None),
        None,
    ],
)
def test_a_seal_opens_for_its_own_caller_only(other: object) -> None:
    sealed = SEAL.seal({"FB:x"}, ALICE)
    with pytest.raises(InvalidArgument, match="x-palimpsest-bookmark"):
        SEAL.open(sealed, other)  # type: ignore[arg-type]


def _flipped(sealed: str) -> str:
    body = bytearray(base64.urlsafe_b64decode(sealed[3:] + "=" * (-len(sealed[3:]) % 4)))
    body[20] ^= 1
    return sealed[:3] + base64.urlsafe_b64encode(bytes(body)).rstrip(b"=").decode()


def _respelled(sealed: str) -> str:
    """The same bytes in another spelling: the last character's unused low bits set."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    unused = {2: 15, 3: 3}[len(sealed[3:]) % 4]
    last = alphabet.index(sealed[-1])
    return sealed[:-1] + alphabet[last | unused if last & unused != unused else last & ~unused]


@pytest.mark.parametrize(
    "raw",
    [
        _respelled(SEAL.seal({"FB:x"}, ALICE)),
        SEAL.seal({"FB:x"}, ALICE) + "!",  # a character a lenient decoder would drop
        "FB:kcwQK/4b/GkHQx2UfOYSDgqIGckBBZA=",  # a raw Neo4j bookmark, as the old header was
        "b1.not base64!",
        "b1." + "A" * 5000,
        _flipped(SEAL.seal({"FB:x"}, ALICE)),
        BookmarkSeal(os.urandom(32)).seal({"FB:x"}, ALICE),  # another server's key
        SEAL.seal({f"FB:{i}" for i in range(MAX_BOOKMARKS + 1)}, ALICE),
    ],
)
def test_anything_this_service_did_not_seal_is_refused_alike(raw: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        SEAL.open(raw, ALICE)
    with pytest.raises(InvalidArgument) as reference:
        SEAL.open("FB:x", ALICE)
    assert refused.value.message == reference.value.message


def test_a_transaction_supersedes_the_bookmarks_it_started_after() -> None:
    causal = Causal({"FB:given", "FB:other"}, awaiting=True)
    causal.after(frozenset({"FB:given"}), frozenset({"FB:made"}))
    assert causal.seen == {"FB:other", "FB:made"}
    assert not causal.awaiting, "a transaction that ended reached what it started after"
    causal.after(frozenset({"FB:other", "FB:made"}), frozenset())  # nothing new: kept
    assert causal.seen == {"FB:other", "FB:made"}


def test_the_scope_is_per_request_and_awaits_only_given_bookmarks() -> None:
    assert current() is None
    with request_scope({"FB:x"}) as causal:
        assert current() is causal
        assert causal.awaiting
    with request_scope(set()) as causal:
        assert not causal.awaiting
    assert current() is None


def test_with_shards_each_shard_starts_after_its_own_bookmarks_only() -> None:
    causal = Causal({"a@FB:1", "b@FB:2", "FB:untagged"}, awaiting=True, tenant="acme")
    assert causal.given_to("a") == {"FB:1"}
    assert causal.given_to("b") == {"FB:2"}
    # One server is given no shard's bookmark (a header from before the shards went away).
    assert causal.given_to(None) == {"FB:untagged"}
    assert causal.awaits("a")
    assert causal.awaits("b")
    assert not causal.awaits("c"), "a shard given nothing waits for nothing"
    causal.after(frozenset({"FB:1"}), frozenset({"FB:3"}), "a")
    assert causal.seen == {"a@FB:3", "b@FB:2", "FB:untagged"}
    assert not causal.awaits("a"), "shard a has reached what it was given"
    assert causal.awaits("b"), "shard b has not: its wait is its own"
    assert causal.awaiting, "the one-server flag is untouched by a shard's transaction"


def test_a_request_scope_carries_the_callers_tenant() -> None:
    with request_scope({"a@FB:1"}, "acme") as causal:
        assert current() is causal
        assert causal.tenant == "acme"
    with request_scope(set()) as causal:
        assert causal.tenant is None


async def test_a_tenant_bound_in_a_task_stays_in_that_task() -> None:
    async def task() -> str | None:
        bind_tenant("acme")
        causal = current()
        return None if causal is None else causal.tenant

    assert await asyncio.create_task(task()) == "acme"
    assert current() is None, "the binding ended with its task"
    with request_scope({"a@FB:1"}, None) as causal:
        bind_tenant("acme")
        assert causal.tenant == "acme"
        assert causal.seen == {"a@FB:1"}, "bookmarks untouched"
        bind_tenant("globex")
        assert causal.tenant == "acme", "a request's tenant is never replaced"
