"""The writer lock both backends share: one holder per key, others free, nothing left behind."""

from __future__ import annotations

import threading

import anyio

from palimpsest.sqlmem.core.writers import ThreadWriters, Writers


def test_one_async_writer_per_key_and_other_keys_run_alongside() -> None:
    writers = Writers()
    events: list[str] = []

    async def write(key: str, tag: str) -> None:
        async with writers.hold(key):
            events.append(f"{tag}+")
            await anyio.sleep(0.02)
            events.append(f"{tag}-")

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(write, "a", "a1")
            tg.start_soon(write, "a", "a2")
            tg.start_soon(write, "b", "b1")

    anyio.run(main)
    a = [e for e in events if e.startswith("a")]
    assert a in (["a1+", "a1-", "a2+", "a2-"], ["a2+", "a2-", "a1+", "a1-"])
    # b ran while a's first writer held its lock.
    assert events.index("b1+") < events.index(a[1])
    assert len(writers) == 0


def test_one_thread_writer_per_key_and_the_entry_goes_with_its_last_user() -> None:
    writers = ThreadWriters()
    inside = 0
    most = 0
    guard = threading.Lock()

    def write() -> None:
        nonlocal inside, most
        with writers.hold("a"):
            with guard:
                inside += 1
                most = max(most, inside)
            threading.Event().wait(0.01)
            with guard:
                inside -= 1

    threads = [threading.Thread(target=write) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1
    assert len(writers) == 0
