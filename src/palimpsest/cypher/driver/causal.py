"""Read-your-writes across API replicas: Neo4j bookmarks, sealed, carried by the client.

Every response that touched Neo4j carries ``X-Palimpsest-Bookmark``: the bookmarks of the
transactions the request ran (a bookmark names a committed transaction; the driver makes a
later transaction wait until the server it reaches has applied it). A client that sends the
header back, to any replica, reads at least what it wrote: on a cluster the read may reach a
follower, which waits for the leader's transaction first. Without the header a request sees
whatever the server it reaches has (on a single server, everything committed).

A raw Neo4j bookmark names the database's last transaction id in plain packstream, so handed
out as it is it would let a tenant count everyone's writes, and one with a raised id would
make the database wait for a transaction that never comes. So the header is *sealed*:
AES-GCM under a key derived from the server secret (every replica shares it), with the
caller's tenant, user and agent as associated data and padding to a fixed block, so a client
can neither read it, nor forge or alter it, nor use another principal's. Anything that does
not open is refused with ``INVALID_ARGUMENT`` before anything runs, with one message whatever
the cause. The executor then waits at most ``bookmark_wait_seconds`` for the state a sealed
bookmark names (a replica restored from an older backup may never reach it) and refuses the
request with ``UNAVAILABLE`` past that, never retried.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal

HEADER = "x-palimpsest-bookmark"
MAX_BOOKMARKS = 16
MAX_HEADER_CHARS = 4096
_VERSION = "b1."
_NONCE_BYTES = 12
# Sealed plaintexts are padded to a multiple of this, so a header's length does not follow
# the size of the transaction id it carries.
_BLOCK = 256
_REFUSAL = (
    f"{HEADER} must be the unchanged value of an earlier response's {HEADER} header, sent "
    "with a token of the same tenant, user and agent; drop the header to read without it"
)


class BookmarkSeal:
    """Seals bookmarks for one principal and opens them again; one key for every replica."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def seal(self, bookmarks: set[str], principal: Principal | None) -> str:
        plain = orjson.dumps(sorted(bookmarks))
        plain += b" " * (-len(plain) % _BLOCK)
        nonce = os.urandom(_NONCE_BYTES)
        sealed = nonce + self._aead.encrypt(nonce, plain, _bound_to(principal))
        return _VERSION + base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()

    def open(self, raw: str | None, principal: Principal | None) -> set[str]:
        """The bookmarks of a request header; refuses anything this service did not seal
        for this principal."""
        if raw is None or not raw.strip():
            return set()
        value = raw.strip()
        if len(value) > MAX_HEADER_CHARS or not value.startswith(_VERSION) or principal is None:
            raise InvalidArgument(_REFUSAL)
        body = value[len(_VERSION) :]
        try:
            sealed = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
            # One spelling per value: a lenient decoder would open edited headers whose
            # unused bits or stray characters it drops.
            if base64.urlsafe_b64encode(sealed).rstrip(b"=").decode() != body:
                raise ValueError("not the canonical spelling")
            plain = self._aead.decrypt(
                sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], _bound_to(principal)
            )
            values = orjson.loads(plain)
        except (binascii.Error, ValueError, InvalidTag, orjson.JSONDecodeError) as e:
            raise InvalidArgument(_REFUSAL) from e
        if (
            not isinstance(values, list)
            or len(values) > MAX_BOOKMARKS
            or not all(isinstance(v, str) for v in values)
        ):
            raise InvalidArgument(_REFUSAL)
        return set(values)


def _bound_to(principal: Principal | None) -> bytes:
    if principal is None:
        return b"anonymous"
    return orjson.dumps([principal.tenant_id, principal.user_id, principal.agent_name])


# Between a shard's name and its bookmark when the deployment has tenant shards
# (cypher/shards): a shard's bookmarks mean nothing to another server, so each is kept, and
# sealed, with the name of the shard that made it. Shard names never hold it.
SHARD_TAG = "@"


@dataclass
class Causal:
    """The bookmarks one request has seen: those it was given, then those it made.

    ``awaiting`` holds while no transaction of the request has yet reached the given ones:
    the executor waits for them, briefly, before the first statement runs. With tenant
    shards the bookmarks are tagged with their shard's name and awaited per shard
    (``reached``); ``tenant`` is the caller's tenant, whose shard serves the request's
    transactions that name no scope (``cypher/shards/router.py``).
    """

    seen: set[str] = field(default_factory=set)
    awaiting: bool = False
    tenant: str | None = None
    reached: set[str] = field(default_factory=set)

    def given_to(self, shard: str | None) -> frozenset[str]:
        """The bookmarks a transaction on ``shard`` starts after (None: the one server)."""
        if shard is None:
            # A shard's bookmark (from before the shards were taken away) means nothing to
            # the one server, and its tagged form would be refused as malformed.
            return frozenset(b for b in self.seen if SHARD_TAG not in b)
        tag = shard + SHARD_TAG
        return frozenset(b[len(tag) :] for b in self.seen if b.startswith(tag))

    def awaits(self, shard: str | None) -> bool:
        """Whether a transaction on ``shard`` must first wait for the given bookmarks."""
        if shard is None:
            return self.awaiting
        return self.awaiting and shard not in self.reached and bool(self.given_to(shard))

    def after(self, used: frozenset[str], made: frozenset[str], shard: str | None = None) -> None:
        """A transaction that started after ``used`` ended at ``made``, which supersedes them."""
        if not made:
            return
        if shard is None:
            self.seen = (self.seen - used) | set(made)
            self.awaiting = False
            return
        tag = shard + SHARD_TAG
        self.seen = (self.seen - {tag + b for b in used}) | {tag + b for b in made}
        self.reached.add(shard)


_current: ContextVar[Causal | None] = ContextVar("palimpsest_causal", default=None)


@contextmanager
def request_scope(given: set[str], tenant: str | None = None) -> Iterator[Causal]:
    causal = Causal(set(given), awaiting=bool(given), tenant=tenant)
    token = _current.set(causal)
    try:
        yield causal
    finally:
        _current.reset(token)


def current() -> Causal | None:
    return _current.get()


def bind_tenant(tenant: str) -> None:
    """The caller's tenant for the rest of this task's work, where no request scope carried
    it in (MCP over stdio, which has no HTTP middleware): with tenant shards its shard serves
    the unbound handle's work. A request's own tenant is never replaced, and bookmarks are
    untouched."""
    causal = _current.get()
    if causal is None:
        _current.set(Causal(tenant=tenant))
    elif causal.tenant is None:
        causal.tenant = tenant
