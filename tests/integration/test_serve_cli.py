"""`palimpsest serve` as a person runs it: it speaks only once it listens, and says it all."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import httpx

from palimpsest.config import Settings
from palimpsest.local.neo4j import status


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_serve_announces_urls_token_and_password_only_once_listening(settings: Settings) -> None:
    # The managed Neo4j of this test run is already running, so serve only finds it.
    assert status(settings).running
    port = _free_port()
    palimpsest = Path(sys.executable).parent / "palimpsest"
    process = subprocess.Popen(
        [str(palimpsest), "serve", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        # As a terminal starts it: a runner that ignores SIGINT (a job sent to the background by
        # a non-interactive shell) would pass the ignoring on, and Ctrl-C would not reach serve.
        preexec_fn=_default_sigint,
    )
    assert process.stderr is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            assert line, f"serve exited early: {''.join(lines)}"
            lines.append(line)
            if line.startswith("GraphiQL:"):
                # Printed only after the socket listens: the very next request is answered.
                response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
                assert response.status_code == 200
            if line.startswith("Ready."):
                break
        text = "".join(lines)
        assert f"GraphiQL: http://127.0.0.1:{port}/graphql" in text
        token = text.split("development token (", 1)[1].split("):\n", 1)[1].split("\n", 1)[0]
        assert "agent dev-agent; lives 1 hour, until " in text
        me = httpx.post(
            f"http://127.0.0.1:{port}/graphql",
            json={"query": "{ me { tenant user } }"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert me.json()["data"]["me"] == {"tenant": "dev", "user": "dev-user"}
        browser = f"http://127.0.0.1:{settings.neo4j.http_port}/browser/"
        password = settings.neo4j_home / "password"
        assert f"Neo4j Browser: {browser} (user neo4j, password in {password})" in text
    finally:
        process.send_signal(signal.SIGINT)
        rest = process.communicate(timeout=60)[1]
    print(rest)
    assert process.returncode == 130  # the shell's code for Ctrl-C
    assert "Traceback" not in rest
    assert "stop it with `palimpsest neo4j stop`" in rest
    assert status(settings).running  # serve leaves the shared Neo4j alone


def test_browser_discovery_offers_the_configured_bolt_port(settings: Settings) -> None:
    # Neo4j Browser connects to the advertised Bolt address; it must follow the configured port.
    url = f"http://127.0.0.1:{settings.neo4j.http_port}/"
    with urllib.request.urlopen(url, timeout=10) as response:
        discovery = json.loads(response.read())
    assert discovery["bolt_direct"] == f"bolt://127.0.0.1:{settings.neo4j.bolt_port}"
