"""The API as its own process (uvicorn), for the load and fault suites.

A separate process is what production runs, and the only way to SIGKILL the API mid-batch.
Settings reach it through ``PALIMPSEST_*`` environment variables, as they would in a
deployment.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ApiProcess:
    def __init__(
        self,
        env: dict[str, str],
        log: Path,
        port: int | None = None,
        drop: tuple[str, ...] = (),
        workers: int = 1,
    ) -> None:
        self.env = {**{k: v for k, v in os.environ.items() if k not in drop}, **env}
        self.log = log
        self.port = port or free_port()
        self.workers = workers
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180.0) -> None:
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "palimpsest.app:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--log-level",
            "warning",
            "--workers",
            str(self.workers),
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=out
            )
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float) -> float:
        """Seconds until ``/readyz`` answers 200; raises when the process dies or time runs out."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"the API exited with {self.process.returncode}; see {self.log}")
            if self.ready():
                return time.monotonic() - started
            time.sleep(0.1)
        raise RuntimeError(f"the API was not ready within {timeout:.0f}s; see {self.log}")

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as r:  # noqa: S310
                return int(r.status) == 200
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: no clean-up, no flush; what a crash does."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
