"""Read-your-writes across API replicas: Neo4j bookmarks carried by the client.

Every response that touched Neo4j carries ``X-Palimpsest-Bookmark``: the bookmarks of the
transactions the request ran (a bookmark names a committed transaction; the driver makes a
later transaction wait until the server it reaches has applied it). A client that sends the
header back, to any replica, reads at least what it wrote: on a cluster the read may reach a
follower, which waits for the leader's transaction first. Without the header a request sees
whatever the server it reaches has (on a single server, everything committed).

The header holds at most ``MAX_BOOKMARKS`` comma-separated bookmarks of the shape Neo4j
issues; anything else is refused with ``INVALID_ARGUMENT`` before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from palimpsest.errors import InvalidArgument

HEADER = "x-palimpsest-bookmark"
MAX_BOOKMARKS = 16
_BOOKMARK = re.compile(r"[A-Za-z0-9:+/=_.-]{1,512}")


@dataclass
class Causal:
    """The bookmarks one request has seen: those it was given, then those it made."""

    seen: set[str] = field(default_factory=set)

    def after(self, used: frozenset[str], made: frozenset[str]) -> None:
        """A transaction that started after ``used`` ended at ``made``, which supersedes them."""
        if made:
            self.seen = (self.seen - used) | set(made)

    def header(self) -> str | None:
        return ",".join(sorted(self.seen)) if self.seen else None


_current: ContextVar[Causal | None] = ContextVar("palimpsest_causal", default=None)


def parse(raw: str | None) -> set[str]:
    """The bookmarks of a request header; refuses anything Neo4j would not have issued."""
    if raw is None or not raw.strip():
        return set()
    values = [v.strip() for v in raw.split(",")]
    if len(values) > MAX_BOOKMARKS or not all(_BOOKMARK.fullmatch(v) for v in values):
        raise InvalidArgument(
            f"{HEADER} must be the value of an earlier response's {HEADER} header "
            f"(at most {MAX_BOOKMARKS} bookmarks)"
        )
    return set(values)


@contextmanager
def request_scope(seen: set[str]) -> Iterator[Causal]:
    causal = Causal(seen)
    token = _current.set(causal)
    try:
        yield causal
    finally:
        _current.reset(token)


def current() -> Causal | None:
    return _current.get()
