"""The old import paths of the modules grouped by role: each is the same module object as its
new path, and type checkers see it through a ``.pyi``. That nothing in the repository imports
one any more is checked by tests/unit/bench/test_moved.py's scan, one for the product's table
and the bench's (the product's tests do not import the bench)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from palimpsest import MOVED

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_new_module(old: str) -> None:
    new = importlib.import_module(MOVED[old])
    assert importlib.import_module(old) is new
    parent, _, name = old.rpartition(".")
    assert getattr(importlib.import_module(parent), name) is new
    assert new.__spec__ is not None
    assert new.__spec__.name == MOVED[old]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_has_a_stub_and_no_module(old: str) -> None:
    path = SRC / old.replace(".", "/")
    assert not path.with_suffix(".py").exists()
    assert f"from {MOVED[old]} import *" in path.with_suffix(".pyi").read_text()
    assert (SRC / MOVED[old].replace(".", "/")).with_suffix(".py").is_file()


def test_a_monkeypatch_through_the_old_path_reaches_the_new_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from palimpsest.domain.time import timeparse

    def sentinel() -> None: ...

    monkeypatch.setattr("palimpsest.timeparse.parse_time", sentinel)
    assert vars(timeparse)["parse_time"] is sentinel
