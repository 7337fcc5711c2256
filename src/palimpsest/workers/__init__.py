"""Worker processes with a hard deadline: the one mechanism that keeps work proportional to a
request's size off the event loop (agent SQL on SQLite, ``sqlmem/sqlite/pool.py``; diffs,
Markdown parsing and term indexing, ``offload.py``).

A request goes to an idle worker over a socket and its answer comes back the same way: one
round trip per call. When the answer has not come within the caller's time after it was sent,
the worker is killed (SIGKILL), the caller gets ``Expired``, and a replacement is started.
Workers start when first needed (the most recently used is taken first, so light use keeps one
process busy), and the time a worker takes to start never counts against a request. A worker
is ``python -c <command> <fd>``: it reads its setup from the socket, answers ``READY``, then
answers each request with ``(kind, value)`` (a ``("at", n)`` before the answer reports
progress). A thread would not do: pure-Python work holds the interpreter lock the event loop
needs, and a thread cannot be stopped at a deadline.
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
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import anyio

import palimpsest
from palimpsest import errors
from palimpsest.errors import Unavailable

READY = "ready"
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 2.0


class Expired(Exception):
    """The worker did not answer in time and was killed."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A coded error crossing back to the API process (its class name in ``errors``)."""

    kind: str
    message: str
    details: dict[str, Any]

    def error(self) -> errors.PalimpsestError:
        cls = getattr(errors, self.kind, None)
        if not (isinstance(cls, type) and issubclass(cls, errors.PalimpsestError)):
            cls = errors.DatabaseFailure
        return cls(self.message, **self.details)


class _Worker:
    def __init__(self, command: str, setup: object) -> None:
        self.command = command
        self.setup = setup
        self.process: subprocess.Popen[bytes] | None = None
        self.channel: Connection | None = None
        self.ready = False

    def start(self) -> None:
        """Start the process; its readiness is awaited by the next call, not here."""
        ours, theirs = socket.socketpair()
        with ours, theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-c", self.command, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=_environment(),
            )
            self.channel = Connection(ours.detach())
        self.ready = False
        self.channel.send(self.setup)

    def call(
        self, request: object, timeout_s: float | None, progress: Callable[[int], None]
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
            raise Unavailable("a worker process stopped unexpectedly; retry") from e

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
        """End the process gently (it closes what it holds), or kill it."""
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


class ProcessPool:
    """``size`` workers running ``command``, each sent ``setup`` when it starts. Callers
    beyond ``size`` wait (in their thread) for a worker to be idle, so an async caller takes a
    thread only with a token of ``limiter`` (``size`` tokens): the others wait on the event
    loop, holding no thread. On anyio's default limiter, shared by every ``to_thread`` call,
    a burst of large requests would fill its threads with waiters and stall the embedder,
    SQL Memory and every tenant's other work behind them."""

    def __init__(self, command: str, setup: object, size: int) -> None:
        self.size = size
        self.limiter = anyio.CapacityLimiter(size)
        self._workers = [_Worker(command, setup) for _ in range(size)]
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        for w in reversed(self._workers):
            self._idle.put(w)
        self._everyone = threading.Lock()

    def call(
        self,
        request: object,
        timeout_s: float | None,
        progress: Callable[[int], None] = lambda _: None,
    ) -> tuple[str, Any]:
        """A worker's ``(kind, value)`` answer; ``Expired`` when it took longer than
        ``timeout_s`` (counted from when a worker took the request)."""
        worker = self._idle.get()
        try:
            return worker.call(request, timeout_s, progress)
        finally:
            self._idle.put(worker)

    def broadcast(self, request: object) -> None:
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


def serve(channel: Connection, handle: Callable[[Any, Connection], tuple[str, Any]]) -> None:
    """A worker's loop: answer each request with ``handle`` until the API process closes the
    socket (the setup, already read, is the caller's)."""
    channel.send(READY)
    while True:
        channel.send(handle(channel.recv(), channel))


def _environment() -> dict[str, str]:
    """The API's environment, with this package first on the path (as the API imports it)."""
    here = str(Path(palimpsest.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here + (os.pathsep + path if path else "")}
