"""The client page's example runs as written against the real server."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "client.md"


def test_the_example_runs(
    live_server_url: str,
    token: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    [example] = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    monkeypatch.setenv("PALIMPSEST_SERVER_URL", live_server_url)
    monkeypatch.setenv("PALIMPSEST_RUN_TOKEN", token(f"t-{uuid.uuid4().hex[:10]}", "ada"))
    exec(compile(example, str(PAGE), "exec"), {})  # noqa: S102 - the page's own code
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("prefs/editor ")
    assert "['prefs/editor'] False" in printed
    assert printed[-1].startswith("FORBIDDEN ")
