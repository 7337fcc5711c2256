"""The suites' old paths in the bench: each is the same module object as its new path in
``palimpsest_suites``; and one scan of the repository finds no import of an old path, the
bench's or the product's (``palimpsest.MOVED``, whose other checks are
tests/unit/test_moved.py's)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from palimpsest import MOVED as PRODUCT_MOVED
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


def test_nothing_in_the_repository_imports_an_old_path() -> None:
    old_paths = MOVED.keys() | PRODUCT_MOVED.keys()
    found = []
    for folder in ("src", "tests", "bench", "suites"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                else:
                    continue
                found += [
                    f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n in old_paths
                ]
    assert found == []
