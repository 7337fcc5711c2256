"""The suites' old paths in the bench: each is the same module object as its new path in
``palimpsest_suites``. That nothing in the repository imports one any more is checked by
tests/unit/test_moved.py's scan, one for both tables."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from palimpsest_bench import MOVED

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_new_module(old: str) -> None:
    new = importlib.import_module(MOVED[old])
    assert importlib.import_module(old) is new
    parent, _, name = old.rpartition(".")
    assert getattr(importlib.import_module(parent), name) is new
    assert new.__spec__ is not None
    assert new.__spec__.name == MOVED[old]


def test_every_suite_module_has_its_old_path() -> None:
    suites = ROOT / "suites" / "palimpsest_suites"
    moved = {
        ".".join(p.relative_to(suites).with_suffix("").parts)
        for p in [*suites.glob("*.py"), *(suites / "attack").glob("*.py")]
        if p.name != "__init__.py"
    } - {"crash", "figures"}  # new modules: no old path
    assert {m.removeprefix("palimpsest_suites.") for m in MOVED.values()} == moved | {"attack"}
