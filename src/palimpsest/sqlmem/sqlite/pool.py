"""The worker processes that run agent SQL on SQLite (``worker.py``), and their hard deadline.

The processes, the socket round trip and the kill at the deadline are ``palimpsest.workers``
(shared with ``offload.py``). When the answer has not come ``timeout_ms`` (plus a short grace,
in which SQLite's own progress handler normally ends the statement cleanly) after it was sent,
the worker is killed, the caller gets the coded timeout, and a replacement is started; the
killed transaction is rolled back by SQLite from the WAL.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from palimpsest.sqlmem.core.failure import timed_out
from palimpsest.sqlmem.sqlite.worker import Limits, Request
from palimpsest.workers import Expired, ProcessPool, Refusal

# SQLite's progress handler stops most statements at the limit itself; the kill is for the
# one function call it cannot stop, so it waits this much longer.
KILL_GRACE_S = 0.25
_COMMAND = "from palimpsest.sqlmem.sqlite.worker import main; main()"


class WorkerPool:
    def __init__(self, limits: Limits, size: int) -> None:
        self.limits = limits
        self.size = size
        self._pool = ProcessPool(_COMMAND, limits, size)

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        """The threads an async caller may hold waiting for a worker (``ProcessPool``)."""
        return self._pool.limiter

    def run(self, request: Request) -> Any:
        """The request's answer from a worker, within the deadline; a coded error otherwise."""
        timeout_ms = self.limits.timeout_ms
        timeout_s = timeout_ms / 1000 + KILL_GRACE_S if timeout_ms > 0 else None
        at = [0]  # the statement a batch has reached

        def reached(statement: int) -> None:
            at[0] = statement

        started = time.monotonic()
        try:
            kind, value = self._pool.call(request, timeout_s, reached)
        except Expired:
            elapsed_ms = round((time.monotonic() - started) * 1000)
            raise timed_out(timeout_ms, elapsed_ms, at[0]) from None
        if kind == "error":
            assert isinstance(value, Refusal)
            raise value.error()
        return value

    def broadcast(self, request: Request) -> None:
        """Send a request to every running worker (waiting for each to be idle)."""
        self._pool.broadcast(request)

    def close(self) -> None:
        """Stop the idle workers; a busy one is killed (its caller gets an error)."""
        self._pool.close()
