"""A local Neo4j Community server assembled from Maven Central jars, run without Docker.

``install`` fetches the locked jars (see ``jars``) into ``<home>/neo4j/<version>/lib`` (outside
the git tree), writes the configuration and sets a generated password before the first start.
``start`` launches the JVM in the background and waits until Bolt answers; ``stop`` sends
SIGTERM and waits for a clean shutdown.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local import detached
from palimpsest.local.neo4j import extension, jars
from palimpsest.local.neo4j.conf import java_command, neo4j_conf
from palimpsest.local.neo4j.java import find_java
from palimpsest.local.passwords import generated_password
from palimpsest.local.ports import require_free

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Status:
    installed: bool
    running: bool
    pid: int | None
    bolt_uri: str
    browser_url: str
    home: Path


def credentials(settings: Settings) -> tuple[str, str]:
    """The Bolt user and password (``Settings.neo4j_credentials``, kept under this name)."""
    return settings.neo4j_credentials()


def install(settings: Settings, say: Say = print) -> None:
    home = settings.neo4j_home
    lock = jars.load_lock(settings.neo4j.version)
    for folder in ("conf", "data", "logs", "plugins", "import", "run"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    if jars.lib_matches(home, lock):
        say(f"neo4j {settings.neo4j.version}: the locked jars are in {home / 'lib'}")
    else:
        if _running_pid(settings) is not None:
            raise Unavailable(
                f"{home / 'lib'} does not match the jar lock, and Neo4j is running from it: "
                "stop it first (`palimpsest neo4j stop`)"
            )
        jars.fetch(lock, home, settings.local.maven_repository_url, say)
    (home / "conf" / "neo4j.conf").write_text(neo4j_conf(settings))
    _set_initial_password(settings, home, say)
    if settings.neo4j.extension:
        # Loaded at the next start; a running server keeps the jar it started with.
        extension.build(settings, say)


def build_extension(settings: Settings, say: Say = print, output: Path | None = None) -> Path:
    """Palimpsest's extension alone, built against the locked jars (fetched into the managed
    home when missing): what the Docker image ships for the official Neo4j image, copied
    into ``output`` when given."""
    home = settings.neo4j_home
    lock = jars.load_lock(settings.neo4j.version)
    if not jars.lib_matches(home, lock):
        jars.fetch(lock, home, settings.local.maven_repository_url, say)
    jar = extension.build(settings, say)
    if output is None:
        return jar
    output.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(jar, output / jar.name)
    say(f"copied the extension to {output / jar.name}")
    return output / jar.name


def start(settings: Settings, say: Say = print, timeout: float = 180.0) -> Status:
    current = status(settings)
    if current.running:
        say(f"neo4j already running (pid {current.pid})")
        return current
    # Before anything else: Neo4j would bind Bolt, report ready, and die seconds later on a
    # taken HTTP port.
    require_free(
        "127.0.0.1",
        {
            settings.neo4j.bolt_port: "PALIMPSEST_NEO4J_BOLT_PORT",
            settings.neo4j.http_port: "PALIMPSEST_NEO4J_HTTP_PORT",
        },
    )
    if not current.installed:
        install(settings, say)
    home = settings.neo4j_home
    (home / "conf" / "neo4j.conf").write_text(neo4j_conf(settings))  # ports may have changed
    runtime = find_java(settings)
    process = detached.spawn(
        java_command(settings, runtime, home), home / "logs" / "console.log", cwd=home
    )
    _pid_file(settings).write_text(str(process.pid))
    say(
        f"neo4j {settings.neo4j.version} starting (pid {process.pid}) on Java {runtime.version} "
        f"({runtime.source}, {runtime.home}), logs in {home / 'logs'}"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _pid_file(settings).unlink(missing_ok=True)
            raise Unavailable(
                f"neo4j exited with code {process.returncode}; see {home / 'logs' / 'console.log'}"
            )
        # Ready means both connectors answer: Bolt comes up before HTTP.
        if _bolt_ready(settings) and _http_ready(settings):
            say(f"neo4j ready on {settings.bolt_uri}")
            return status(settings)
        time.sleep(0.5)
    stop(settings, say)
    raise Unavailable(f"neo4j did not answer on Bolt and HTTP within {timeout:.0f}s; stopped it")


def stop(settings: Settings, say: Say = print, timeout: float = 60.0) -> bool:
    pid = _running_pid(settings)
    if pid is None:
        say("neo4j is not running")
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.2)
    if _alive(pid):
        say(f"neo4j (pid {pid}) ignored SIGTERM for {timeout:.0f}s; killing it")
        os.kill(pid, signal.SIGKILL)
    detached.reap()
    _pid_file(settings).unlink(missing_ok=True)
    say(f"neo4j stopped (pid {pid})")
    return True


def status(settings: Settings) -> Status:
    pid = _running_pid(settings)
    return Status(
        installed=(settings.neo4j_home / "lib" / f"neo4j-{settings.neo4j.version}.jar").exists()
        and _password_file(settings).exists(),
        running=pid is not None,
        pid=pid,
        bolt_uri=settings.bolt_uri,
        browser_url=f"http://127.0.0.1:{settings.neo4j.http_port}/browser/",
        home=settings.neo4j_home,
    )


def _set_initial_password(settings: Settings, home: Path, say: Say) -> None:
    path = _password_file(settings)
    if path.exists() and (home / "data" / "dbms" / "auth.ini").exists():
        return
    password = generated_password()
    set_initial_password(find_java(settings).java, home, password)
    path.touch(mode=0o600)
    path.write_text(password)
    say(f"generated the neo4j password (kept in {path})")


def set_initial_password(java: Path, home: Path, password: str) -> None:
    """Neo4j's admin command, before the first start. ``--`` ends its options, so that no
    password can be read as one."""
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}
    argv = [str(java), "-cp", str(home / "lib" / "*"), "org.neo4j.server.startup.Neo4jAdminCommand"]
    argv += ["dbms", "set-initial-password", "--", password]
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)


def _password_file(settings: Settings) -> Path:
    return settings.neo4j_password_file


def _pid_file(settings: Settings) -> Path:
    return settings.neo4j_home / "run" / "palimpsest-neo4j.pid"


def _running_pid(settings: Settings) -> int | None:
    path = _pid_file(settings)
    if not path.exists():
        return None
    pid = int(path.read_text().strip() or 0)
    return pid if pid and _alive(pid) and _is_neo4j(pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited child not yet reaped) still answers signal 0.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[-1].startswith("Z"))


def _is_neo4j(pid: int) -> bool:
    """Guard against a stale pid file whose pid now belongs to another process."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    return not cmdline.exists() or b"org.neo4j.server" in cmdline.read_bytes()


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _http_ready(settings: Settings) -> bool:
    url = f"http://127.0.0.1:{settings.neo4j.http_port}/"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200 and b"bolt_direct" in response.read())
    except (OSError, ValueError):
        return False


def _bolt_ready(settings: Settings) -> bool:
    if not _port_open(settings.neo4j.bolt_port):
        return False
    from neo4j import GraphDatabase

    try:
        with GraphDatabase.driver(settings.bolt_uri, auth=credentials(settings)) as driver:
            driver.verify_connectivity()
    except Exception:
        return False
    return True
