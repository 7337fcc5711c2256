"""Taken ports are named before anything starts: Neo4j's two connectors and the API's port."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from palimpsest.cli import app
from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local import neo4j as neo4j_local
from palimpsest.local.ports import port_taken, require_free


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port another process listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def test_port_taken_tells_listening_from_free(busy_port: int) -> None:
    assert port_taken("127.0.0.1", busy_port)
    assert not port_taken("127.0.0.1", _free_port())


def test_require_free_names_every_taken_port_and_its_setting(busy_port: int) -> None:
    free = _free_port()
    require_free("127.0.0.1", {free: "FREE_SETTING"})
    with pytest.raises(Unavailable) as caught:
        require_free("127.0.0.1", {free: "FREE_SETTING", busy_port: "BUSY_SETTING"})
    assert f"{busy_port} (BUSY_SETTING)" in caught.value.message
    assert "FREE_SETTING" not in caught.value.message


@pytest.mark.parametrize("taken", ["bolt", "http"])
def test_neo4j_start_refuses_a_taken_port_before_installing_or_launching(
    tmp_path: Path, busy_port: int, taken: str
) -> None:
    # The old check only knew Bolt: a taken HTTP port was reported ready, then Neo4j died.
    ports = {"bolt": _free_port(), "http": _free_port()}
    ports[taken] = busy_port
    settings = Settings(
        home=tmp_path / "home", neo4j_bolt_port=ports["bolt"], neo4j_http_port=ports["http"]
    )
    with pytest.raises(Unavailable, match=f"{busy_port} \\(PALIMPSEST_NEO4J_{taken.upper()}_PORT"):
        neo4j_local.start(settings, say=lambda _: None)
    assert not (tmp_path / "home").exists()  # nothing fetched, written or started


def test_serve_finds_a_taken_api_port_before_printing_or_starting_anything(
    tmp_path: Path, busy_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PALIMPSEST_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PALIMPSEST_NEO4J_MANAGED", "true")
    monkeypatch.delenv("PALIMPSEST_NEO4J_URI", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "127.0.0.1", "--port", str(busy_port)])
    assert isinstance(result.exception, Unavailable)
    assert f"{busy_port} (PALIMPSEST_PORT or --port)" in result.exception.message
    assert result.output == ""  # no URL, no token
    assert not (tmp_path / "home").exists()  # Neo4j was not started
