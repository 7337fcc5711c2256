"""A local PostgreSQL for SQL Memory, from Debian's ``postgresql`` package, run like the Neo4j.

Layout under ``<home>/postgres`` (outside the git tree):

- ``password``: the admin role's generated password (mode 600, never readable by the server);
- ``cluster/data``: the data directory made by ``initdb``;
- ``logs/postgres.log``: the server's output.

The server listens on 127.0.0.1 only (no Unix socket), on its own port (5433 by default, so a
system PostgreSQL on 5432 is left alone), with SCRAM passwords for every role.

Debian's ``initdb`` and ``postgres`` refuse to run as root. As root they run as the
``postgres`` system user (``setpriv``), and since that user cannot reach a data directory
inside root's home (``/root`` is mode 700), they run in a private mount namespace where
``cluster/`` is bind-mounted at ``/run/palimpsest-postgres``: the server sees its data
there, nobody else sees the mount, and nothing outside ``<home>/postgres`` changes owner.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local import detached
from palimpsest.local.passwords import generated_password

Say = Callable[[str], None]
# Where the cluster directory appears to the server when it runs as root (see above).
ROOT_VIEW = Path("/run/palimpsest-postgres")
_DEBIAN_BINS = Path("/usr/lib/postgresql")


@dataclass(frozen=True, slots=True)
class Status:
    installed: bool
    running: bool
    pid: int | None
    dsn: str
    home: Path


def credentials(settings: Settings) -> tuple[str, str]:
    """The admin role and its password (``Settings.postgres_credentials``, kept here)."""
    return settings.postgres_credentials()


def conninfo(settings: Settings, dbname: str | None = None) -> dict[str, object]:
    """Connection parameters of the admin role (``Settings.postgres_conninfo``, kept here)."""
    return settings.postgres_conninfo(dbname)


def bin_dir(settings: Settings) -> Path:
    """The directory of ``initdb`` and ``postgres``."""
    if settings.sql.postgres_bin_dir is not None:
        return settings.sql.postgres_bin_dir
    versions = sorted(
        (p for p in _DEBIAN_BINS.glob("*/bin") if (p / "initdb").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1]
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    raise Unavailable(
        "PostgreSQL is not installed: apt-get install postgresql (scripts/ensure-postgres.sh "
        "does it as root), or set PALIMPSEST_POSTGRES_BIN_DIR"
    )


def start(settings: Settings, say: Say = print, timeout: float = 60.0) -> Status:
    current = status(settings)
    if current.running:
        say(f"postgres already running (pid {current.pid})")
        _ensure_database(settings)
        return current
    if not _data_dir(settings).joinpath("PG_VERSION").exists():
        _initdb(settings, say)
    _write_hba(settings)
    logs = settings.postgres_home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    view = _view(settings)
    argv = [
        str(bin_dir(settings) / "postgres"),
        "-D",
        str(view / "data"),
        "-c",
        f"listen_addresses={settings.sql.postgres_host}",
        "-c",
        f"port={settings.sql.postgres_port}",
        "-c",
        "unix_socket_directories=",
        "-c",
        "max_connections=200",
        "-c",
        "password_encryption=scram-sha-256",
        "-c",
        "log_min_messages=warning",
        "-c",
        "log_statement=none",  # agent SQL and its literals never reach the server log
        "-c",
        "log_min_error_statement=panic",
        "-c",
        "log_error_verbosity=terse",  # no DETAIL lines: they quote row values ("Key (k)=...")
    ]
    process = detached.spawn(_as_service(settings, argv), logs / "postgres.log")
    say(
        f"postgres starting (pid {process.pid}) on port {settings.sql.postgres_port}, "
        f"logs in {logs}"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Unavailable(
                f"postgres exited with code {process.returncode}; see {logs / 'postgres.log'}"
            )
        if _ready(settings):
            _ensure_database(settings)
            say(f"postgres ready on {settings.sql.postgres_host}:{settings.sql.postgres_port}")
            return status(settings)
        time.sleep(0.2)
    raise Unavailable(f"postgres did not accept connections within {timeout:.0f}s")


def stop(settings: Settings, say: Say = print, timeout: float = 60.0) -> bool:
    pid = _running_pid(settings)
    if pid is None:
        say("postgres is not running")
        return False
    os.kill(pid, signal.SIGINT)  # "fast" shutdown: roll back open transactions, then exit
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    if _alive(pid):
        say(f"postgres (pid {pid}) ignored SIGINT for {timeout:.0f}s; sending SIGQUIT")
        os.kill(pid, signal.SIGQUIT)
    detached.reap()
    say(f"postgres stopped (pid {pid})")
    return True


def status(settings: Settings) -> Status:
    pid = _running_pid(settings)
    return Status(
        installed=_data_dir(settings).joinpath("PG_VERSION").exists()
        and _password_file(settings).exists(),
        running=pid is not None,
        pid=pid,
        dsn=(
            f"host={settings.sql.postgres_host} port={settings.sql.postgres_port} "
            f"dbname={settings.sql.postgres_database} user={settings.sql.postgres_user}"
        ),
        home=settings.postgres_home,
    )


# -- internals ------------------------------------------------------------------------------


def _initdb(settings: Settings, say: Say) -> None:
    home = settings.postgres_home
    cluster = home / "cluster"
    if cluster.exists():
        shutil.rmtree(cluster)  # a half-made cluster from an interrupted initdb
    cluster.mkdir(parents=True, mode=0o700)
    password = generated_password()
    pwfile = cluster / "initial-password"
    pwfile.touch(mode=0o600)
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        uid, gid = _service_ids(settings)
        os.chown(cluster, uid, gid)
        os.chown(pwfile, uid, gid)
    view = _view(settings)
    argv = [
        str(bin_dir(settings) / "initdb"),
        "-D",
        str(view / "data"),
        "-U",
        settings.sql.postgres_user,
        f"--pwfile={view / 'initial-password'}",
        "--auth=scram-sha-256",
        "--encoding=UTF8",
        "--no-locale",
        "--no-instructions",
    ]
    say(f"initdb into {cluster / 'data'}")
    try:
        subprocess.run(_as_service(settings, argv), check=True, stdout=subprocess.DEVNULL, cwd="/")
    finally:
        pwfile.unlink(missing_ok=True)
    path = _password_file(settings)
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(password)
    say(f"generated the postgres admin password (kept in {path})")


def _write_hba(settings: Settings) -> None:
    """Passwords over loopback TCP only; no local (socket) or remote access."""
    hba = _data_dir(settings) / "pg_hba.conf"
    hba.write_text(
        "# written by palimpsest: loopback TCP with SCRAM passwords, nothing else\n"
        f"host all all {settings.sql.postgres_host}/32 scram-sha-256\n"
    )
    if os.geteuid() == 0:
        uid, gid = _service_ids(settings)
        os.chown(hba, uid, gid)


def _as_service(settings: Settings, argv: list[str]) -> list[str]:
    """``argv`` as it must run: directly, or (as root) as the service user in its namespace."""
    if os.geteuid() != 0:
        return argv
    ROOT_VIEW.mkdir(mode=0o755, parents=True, exist_ok=True)
    user = settings.sql.postgres_os_user
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        'mount --bind "$1" "$2" && shift 2 && exec "$@"',
        "sh",
        str(settings.postgres_home / "cluster"),
        str(ROOT_VIEW),
        "setpriv",
        f"--reuid={user}",
        f"--regid={user}",
        "--init-groups",
        "--",
        *argv,
    ]


def _view(settings: Settings) -> Path:
    """The cluster directory as the server process sees it."""
    return ROOT_VIEW if os.geteuid() == 0 else settings.postgres_home / "cluster"


def _service_ids(settings: Settings) -> tuple[int, int]:
    import pwd

    try:
        entry = pwd.getpwnam(settings.sql.postgres_os_user)
    except KeyError as e:
        raise Unavailable(
            f"system user {settings.sql.postgres_os_user!r} is missing (Debian's postgresql "
            "package creates `postgres`); set PALIMPSEST_POSTGRES_OS_USER"
        ) from e
    return entry.pw_uid, entry.pw_gid


def _ensure_database(settings: Settings) -> None:
    """Create the SQL Memory database once, owned by the admin role."""
    with psycopg.connect(**conninfo(settings, "postgres"), autocommit=True) as conn:  # type: ignore[arg-type]
        found = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [settings.sql.postgres_database]
        ).fetchone()
        if found is None:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
                    sql.Identifier(settings.sql.postgres_database)
                )
            )


def _data_dir(settings: Settings) -> Path:
    return settings.postgres_home / "cluster" / "data"


def _password_file(settings: Settings) -> Path:
    return settings.postgres_password_file


def _running_pid(settings: Settings) -> int | None:
    """The postmaster's pid from ``postmaster.pid`` when that process is alive and ours."""
    try:
        first = (_data_dir(settings) / "postmaster.pid").read_text().split("\n", 1)[0]
    except (FileNotFoundError, PermissionError):
        return None
    if not re.fullmatch(r"\d+", first.strip()):
        return None
    pid = int(first)
    return pid if _alive(pid) and _is_postgres(pid) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        return not stat.read_text().split(") ", 1)[-1].startswith("Z")
    except FileNotFoundError:
        return False


def _is_postgres(pid: int) -> bool:
    """Guard against a stale pid file whose pid now belongs to another process."""
    try:
        return b"postgres" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False


def _ready(settings: Settings) -> bool:
    try:
        with psycopg.connect(**conninfo(settings, "postgres")):  # type: ignore[arg-type]
            return True
    except psycopg.Error:
        return False
