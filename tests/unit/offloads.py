"""An offload that records what it was given and runs it inline: a unit test checks that work
proportional to a request's size goes to the pool (``palimpsest.workers.offload``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from palimpsest.workers.offload import INLINE_BYTES, Offload

T = TypeVar("T")


class RecordingOffload(Offload):
    def __init__(self) -> None:
        super().__init__(1, 0, inline=True)
        self.pooled: list[str] = []  # the functions a worker would have run

    async def run(self, size: int, function: Callable[..., T], *args: Any) -> T:
        if size >= INLINE_BYTES:
            self.pooled.append(f"{function.__module__}.{function.__qualname__}")
        return function(*args)
