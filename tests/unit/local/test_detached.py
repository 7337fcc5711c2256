"""Servers started to outlive the process: own session, own log, reaped once they exit."""

from __future__ import annotations

import gc
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from palimpsest.local import detached

SERVER = "import time; print('up', flush=True); time.sleep(60)"


def _wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _open_paths() -> set[str]:
    fds = Path("/proc/self/fd")
    paths: set[str] = set()
    for fd in fds.iterdir():
        try:
            paths.add(os.readlink(fd))
        except OSError:
            continue  # the listing's own descriptor, already closed
    return paths


def test_a_server_logs_to_its_file_in_its_own_session_and_is_reaped(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    process = detached.spawn([sys.executable, "-c", SERVER], log, cwd=tmp_path)
    pid = process.pid
    try:
        assert str(log) not in _open_paths()  # only the child holds the log open
        _wait_for(lambda: log.read_text() == "up\n", "the server's first line")
        assert os.getsid(pid) == pid != os.getsid(0)
    finally:
        os.kill(pid, signal.SIGTERM)
    del process
    gc.collect()  # a dropped handle of a running child would warn here (and fail the test)

    def reaped() -> bool:
        detached.reap()
        return pid not in detached._children

    _wait_for(reaped, "the stopped server to be reaped")
    assert not Path(f"/proc/{pid}").exists()  # reaped, not left as a zombie
