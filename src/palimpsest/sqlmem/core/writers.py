"""One writer per database at a time, in this process: both backends' writer lock.

A lock per key, made on first use and dropped with its last user, so the table holds only
the databases being written. ``Writers`` is the async level (queued writers hold no worker
thread); ``ThreadWriters`` the same for direct, blocking callers.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio


class Writers:
    """A keyed async lock: ``async with writers.hold(key)`` runs alone among its key's holders."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[anyio.Lock, int]] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, n = self._locks.get(key) or (anyio.Lock(), 0)
        self._locks[key] = (lock, n + 1)
        try:
            async with lock:
                yield
        finally:
            lock, n = self._locks[key]
            if n == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, n - 1)


class ThreadWriters:
    """A keyed thread lock, for callers that block a thread while they write."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    def __len__(self) -> int:
        with self._mutex:
            return len(self._locks)

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._mutex:
            lock, n = self._locks.get(key) or (threading.Lock(), 0)
            self._locks[key] = (lock, n + 1)
        try:
            with lock:
                yield
        finally:
            with self._mutex:
                lock, n = self._locks[key]
                if n == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, n - 1)
