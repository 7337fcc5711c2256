"""Work proportional to a request's size, run off the event loop: in a worker process of a
bounded pool (``workers.py``, the mechanism SQL Memory's workers use), with a deadline.

Pure-Python work on a large input (a line diff of two revisions, parsing a Markdown document,
the term indexing of its chunks) holds the interpreter lock for seconds: on the event loop,
or in a thread, it stalls every other tenant's request and ``/healthz`` with it. Here it runs
in another process; the loop only waits on a socket. A task that outlives the deadline has
its worker killed and the caller gets ``QUOTA_EXCEEDED`` naming the limit. Small inputs run
inline: a process round trip would cost more than the work.

A task is a module-level function and its arguments, pickled to the worker (which imports the
function's module by name); the answer or the coded error it raised comes back the same way.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

import anyio.to_thread

from palimpsest import errors
from palimpsest.config import Settings
from palimpsest.errors import QuotaExceeded
from palimpsest.workers import Expired, ProcessPool, Refusal, serve

T = TypeVar("T")

# Below this many bytes of input a task runs inline: it takes well under a millisecond.
INLINE_BYTES = 64 * 1024
_COMMAND = "from palimpsest.workers.offload import main; main()"


@dataclass(frozen=True, slots=True)
class Task:
    function: Callable[..., Any]
    args: tuple[Any, ...]


class Offload:
    """The pool of ``workers`` processes (started when first needed); ``inline`` runs every
    task in the caller (for unit tests and tools that serve no one else)."""

    def __init__(self, workers: int, timeout_ms: int, *, inline: bool = False) -> None:
        self.timeout_ms = timeout_ms
        self._pool = None if inline else ProcessPool(_COMMAND, None, workers)

    @classmethod
    def inline(cls) -> Offload:
        return cls(1, 0, inline=True)

    @classmethod
    def from_settings(cls, settings: Settings) -> Offload:
        return cls(settings.limits.offload_workers, settings.limits.offload_timeout_ms)

    async def run(self, size: int, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)``, in a worker unless ``size`` (the input's bytes) is small."""
        if self._pool is None or size < INLINE_BYTES:
            return function(*args)
        assert self._pool is not None
        # The pool's limiter: callers beyond its workers wait here, not in a thread.
        limiter = self._pool.limiter
        return await anyio.to_thread.run_sync(self._call, Task(function, args), limiter=limiter)

    def _call(self, task: Task) -> Any:
        assert self._pool is not None
        started = time.monotonic()
        try:
            kind, value = self._pool.call(task, self.timeout_ms / 1000)
        except Expired:
            elapsed_ms = round((time.monotonic() - started) * 1000)
            raise QuotaExceeded(
                f"the work took longer than offloadTimeoutMs ({self.timeout_ms} ms) and was "
                "stopped; nothing was changed. Send a smaller input",
                limit="offloadTimeoutMs",
                timeoutMs=self.timeout_ms,
                elapsedMs=elapsed_ms,
            ) from None
        if kind == "error":
            assert isinstance(value, Refusal)
            raise value.error()
        return value

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


def _handle(task: Task, channel: Connection) -> tuple[str, Any]:
    try:
        return "ok", task.function(*task.args)
    except errors.PalimpsestError as e:
        return "error", Refusal(type(e).__name__, e.message, e.details)
    except Exception as e:
        # A bug: its type crosses back, never its text (which may hold memory contents).
        return "error", Refusal(
            "DatabaseFailure", "a worker failed", {"driverCode": type(e).__name__}
        )


def main() -> None:
    # Ctrl-C reaches the whole process group; the API process decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channel = Connection(int(sys.argv[1]))
    try:
        channel.recv()  # no setup
        serve(channel, _handle)
    except (EOFError, OSError):
        return  # the API process is gone or closed the pool
