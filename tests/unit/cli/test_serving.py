"""What ``palimpsest serve`` announces: the development token says how long it lives."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import jwt
import pytest

from palimpsest.cli.serving import announce
from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, verify


def test_the_development_token_says_how_long_it_lives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(home=tmp_path, neo4j_uri="bolt://127.0.0.1:1")
    announce(settings)
    said = capsys.readouterr().err
    header, token = re.findall(r"^(development token \(.*\)):\n(\S+)$", said, re.M)[0]
    assert verify(load_keys(settings), token).tenant_id == "dev"
    claims = jwt.decode(token, options={"verify_signature": False})
    until = datetime.fromtimestamp(claims["exp"], UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert claims["exp"] - claims["iat"] == 3600
    assert f"lives 1 hour, until {until}" in header
    assert "palimpsest token mint --ttl" in header


@pytest.mark.parametrize(("workers", "line"), [(1, "consolidators: 1 worker(s)"), (0, "none")])
def test_serve_says_whether_it_consolidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: int, line: str
) -> None:
    announce(Settings(home=tmp_path, neo4j_uri="bolt://127.0.0.1:1", serve_consolidators=workers))
    said = [s for s in capsys.readouterr().err.splitlines() if s.startswith("consolidators:")]
    assert len(said) == 1
    assert line in said[0]
