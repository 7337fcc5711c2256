"""The managed PostgreSQL, for real: a second cluster in a temporary home on a free port."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import psycopg
import pytest

from palimpsest.config import Settings
from palimpsest.local import postgres as postgres_local
from palimpsest.local.postgres import manager


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_start_status_login_and_stop_in_its_own_home(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", postgres_port=free_port())
    said: list[str] = []
    assert postgres_local.status(settings).running is False
    started = postgres_local.start(settings, say=said.append)
    try:
        assert started.running
        assert started.pid is not None
        assert any("initdb" in line for line in said)
        # the generated password is kept outside the data directory, readable by its owner only
        password = settings.home / "postgres" / "password"
        assert stat.S_IMODE(password.stat().st_mode) == 0o600
        assert "initial-password" not in {p.name for p in password.parent.rglob("*")}
        with psycopg.connect(**postgres_local.conninfo(settings)) as conn:  # type: ignore[arg-type]
            row = conn.execute(
                "SELECT current_database(), current_setting('listen_addresses'), "
                "current_setting('unix_socket_directories'), current_setting('log_statement'), "
                "current_setting('log_error_verbosity')"
            ).fetchone()
        # loopback only, no socket; agent SQL and row values (DETAIL lines) stay out of the log
        assert row == ("palimpsest_sql", "127.0.0.1", "", "none", "terse")
        if os.geteuid() == 0:
            # the server never runs as root: it runs as the service user
            owner = Path(f"/proc/{started.pid}/status").read_text()
            uid_line = next(line for line in owner.splitlines() if line.startswith("Uid:"))
            assert uid_line.split()[1] != "0"
        # a wrong password is refused (SCRAM on loopback, no trust rule)
        wrong = {**postgres_local.conninfo(settings), "password": "not-it"}
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(**wrong)  # type: ignore[arg-type]
        again = postgres_local.start(settings, say=said.append)
        assert again.pid == started.pid
        assert "already running" in said[-1]
    finally:
        assert postgres_local.stop(settings, say=said.append)
    assert postgres_local.status(settings).running is False
    assert postgres_local.stop(settings, say=said.append) is False


def test_as_root_the_server_runs_as_the_service_user_in_its_own_mount_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(home=tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(manager, "ROOT_VIEW", tmp_path / "view")
    argv = manager._as_service(settings, ["postgres", "-D", "x"])
    assert argv[:5] == ["unshare", "--mount", "--propagation", "private", "--"]
    assert "--reuid=postgres" in argv
    assert argv[-3:] == ["postgres", "-D", "x"]
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert manager._as_service(settings, ["postgres"]) == ["postgres"]
