"""A stand-in for a worker pool's blocking call that holds each caller's thread until opened,
to count the threads async callers hold while they wait for a worker."""

from __future__ import annotations

import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread

# A bound so a broken test fails rather than hangs; nothing is timed against it.
_BOUND_S = 60


class Gate:
    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()
        self._lock = threading.Lock()
        self._inside = 0
        self.most = 0  # the most threads inside at once

    def hold(self) -> None:
        with self._lock:
            self._inside += 1
            self.most = max(self.most, self._inside)
        self.entered.set()
        self.opened.wait(_BOUND_S)
        with self._lock:
            self._inside -= 1


Call = Callable[[], Coroutine[Any, Any, object]]


async def default_threads_held(gate: Gate, calls: Sequence[Call]) -> int:
    """Start every call; once one is inside the gate and the others have had their turns,
    the tokens of anyio's default thread limiter they hold. Then open the gate."""
    default = anyio.to_thread.current_default_thread_limiter()
    before = default.borrowed_tokens
    async with anyio.create_task_group() as tasks:
        for call in calls:
            tasks.start_soon(call)
        try:
            # Waited for in a thread of its own limiter, not the default one it counts.
            own = anyio.CapacityLimiter(1)
            wait = gate.entered.wait
            assert await anyio.to_thread.run_sync(wait, _BOUND_S, limiter=own)
            for _ in range(2 * len(calls)):
                await anyio.lowlevel.checkpoint()
            held = default.borrowed_tokens - before
        finally:
            gate.opened.set()
    return held
