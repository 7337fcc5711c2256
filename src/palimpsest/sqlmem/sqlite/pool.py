"""The worker processes that run agent SQL on SQLite (``worker.py``), and their hard deadline.

A request goes to an idle worker over a socket and its answer comes back the same way: one
round trip per call. When the answer has not come ``timeout_ms`` (plus a short grace, in which
SQLite's own progress handler normally ends the statement cleanly) after it was sent, the
worker is killed (SIGKILL), the caller gets the coded timeout, and a replacement is started;
the killed transaction is rolled back by SQLite from the WAL. Workers start when first needed
(the most recently used is taken first, so light use keeps one process busy), and the time a
worker takes to start never counts against a statement.
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import palimpsest
from palimpsest.errors import Unavailable
from palimpsest.sqlmem.core.failure import timed_out
from palimpsest.sqlmem.sqlite.worker import READY, Limits, Refusal, Request

# SQLite's progress handler stops most statements at the limit itself; the kill is for the
# one function call it cannot stop, so it waits this much longer.
KILL_GRACE_S = 0.25
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 2.0
_COMMAND = "from palimpsest.sqlmem.sqlite.worker import main; main()"


class Expired(Exception):
    """The worker did not answer in time and was killed."""


class _Worker:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.process: subprocess.Popen[bytes] | None = None
        self.channel: Connection | None = None
        self.ready = False

    def start(self) -> None:
        """Start the process; its readiness is awaited by the next call, not here."""
        ours, theirs = socket.socketpair()
        with ours, theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _COMMAND, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=_environment(),
            )
            self.channel = Connection(ours.detach())
        self.ready = False
        self.channel.send(self.limits)

    def call(
        self, request: Request, timeout_s: float | None, progress: Callable[[int], None]
    ) -> tuple[str, Any]:
        if self.process is None or self.process.poll() is not None:
            self.discard()
            self.start()
        channel = self.channel
        assert channel is not None
        try:
            if not self.ready:
                if not channel.poll(_START_TIMEOUT_S) or channel.recv() != READY:
                    raise EOFError
                self.ready = True
            channel.send(request)
            until = None if timeout_s is None else time.monotonic() + timeout_s
            while True:
                left = None if until is None else max(0.0, until - time.monotonic())
                if not channel.poll(left):
                    self.kill()
                    raise Expired
                kind, value = channel.recv()
                if kind != "at":
                    return kind, value
                progress(value)
        except (EOFError, OSError) as e:
            self.discard()
            raise Unavailable("the SQL worker stopped unexpectedly; retry") from e

    def kill(self) -> None:
        """SIGKILL the process and start a replacement."""
        self.discard()
        self.start()

    def discard(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        self.ready = False

    def stop(self) -> None:
        """End the process gently (it closes its connections), or kill it."""
        if self.channel is not None:
            self.channel.close()  # the worker reads EOF and exits
            self.channel = None
        if self.process is not None:
            try:
                self.process.wait(_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
        self.ready = False


class WorkerPool:
    def __init__(self, limits: Limits, size: int) -> None:
        self.limits = limits
        self.size = size
        self._workers = [_Worker(limits) for _ in range(size)]
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        for w in reversed(self._workers):
            self._idle.put(w)
        self._everyone = threading.Lock()

    def run(self, request: Request) -> Any:
        """The request's answer from a worker, within the deadline; a coded error otherwise."""
        timeout_ms = self.limits.timeout_ms
        timeout_s = timeout_ms / 1000 + KILL_GRACE_S if timeout_ms > 0 else None
        at = [0]  # the statement a batch has reached

        def reached(statement: int) -> None:
            at[0] = statement

        worker = self._idle.get()
        started = time.monotonic()
        try:
            kind, value = worker.call(request, timeout_s, reached)
        except Expired:
            elapsed_ms = round((time.monotonic() - started) * 1000)
            raise timed_out(timeout_ms, elapsed_ms, at[0]) from None
        finally:
            self._idle.put(worker)
        if kind == "error":
            assert isinstance(value, Refusal)
            raise value.error()
        return value

    def broadcast(self, request: Request) -> None:
        """Send a request to every running worker (waiting for each to be idle)."""
        with self._everyone:  # two broadcasts would each hold some workers and wait
            taken = [self._idle.get() for _ in range(self.size)]
            try:
                for worker in taken:
                    if worker.process is not None and worker.process.poll() is None:
                        worker.call(request, None, lambda _: None)
            finally:
                for worker in reversed(taken):
                    self._idle.put(worker)

    def close(self) -> None:
        """Stop the idle workers; a busy one is killed (its caller gets an error)."""
        idle: list[_Worker] = []
        while True:
            try:
                idle.append(self._idle.get_nowait())
            except queue.Empty:
                break
        for worker in self._workers:
            if worker in idle:
                worker.stop()
            elif worker.process is not None:
                worker.process.kill()
        for worker in reversed(idle):
            self._idle.put(worker)


def _environment() -> dict[str, str]:
    """The API's environment, with this package first on the path (as the API imports it)."""
    here = str(Path(palimpsest.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here + (os.pathsep + path if path else "")}
