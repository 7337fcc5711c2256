"""The offload pool (``palimpsest.workers.offload``): a large task runs in another process and its
answer, or its coded error, comes back; one past the deadline is stopped and refused naming
the limit; a small one runs inline."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from palimpsest.domain.documents import markdown
from palimpsest.errors import ErrorCode, InvalidArgument, PalimpsestError
from palimpsest.workers.offload import INLINE_BYTES, Offload, Task
from tests.unit.workers.gated import Gate, default_threads_held


@pytest.fixture
def pool() -> Iterator[Offload]:
    # A deadline no loaded machine reaches, but for the test that waits for it on purpose.
    offload = Offload(1, 30_000)
    try:
        yield offload
    finally:
        offload.close()


async def test_a_large_task_runs_in_a_worker_process(pool: Offload) -> None:
    assert await pool.run(INLINE_BYTES, os.getpid) != os.getpid()
    assert await pool.run(INLINE_BYTES - 1, os.getpid) == os.getpid()


async def test_a_coded_error_crosses_back(pool: Offload) -> None:
    with pytest.raises(InvalidArgument, match="NUL"):
        await pool.run(INLINE_BYTES, markdown.check_document, "a\0b")


async def test_a_task_past_the_deadline_is_killed_and_refused() -> None:
    pool = Offload(1, 1000)
    try:
        with pytest.raises(PalimpsestError) as caught:
            await pool.run(INLINE_BYTES, time.sleep, 30)
        assert caught.value.code == ErrorCode.QUOTA_EXCEEDED
        assert caught.value.details["limit"] == "offloadTimeoutMs"
        # The pool goes on, with a fresh worker.
        assert await pool.run(INLINE_BYTES, sum, [1, 2]) == 3
    finally:
        pool.close()


async def test_inline_runs_everything_in_the_caller() -> None:
    assert await Offload.inline().run(10 * INLINE_BYTES, os.getpid) == os.getpid()


async def test_callers_beyond_the_workers_wait_holding_no_thread(
    pool: Offload, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    answers: list[int] = []

    def call(task: Task, timeout_s: float | None) -> tuple[str, Any]:
        gate.hold()  # a worker busy with the first task: the others must wait
        return "ok", task.function(*task.args)

    async def one(n: int) -> None:
        answers.append(await pool.run(INLINE_BYTES, sum, [n]))

    assert pool._pool is not None
    monkeypatch.setattr(pool._pool, "call", call)
    calls = [functools.partial(one, n) for n in range(6)]
    assert await default_threads_held(gate, calls) == 0
    assert gate.most == 1  # one worker: one thread at a time
    assert sorted(answers) == list(range(6))
