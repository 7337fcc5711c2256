"""Each plane's face (``resolvers/<plane>/__init__.py``) exports, in ``__all__``, exactly what
it imports and exactly what the doors take from it (as httpx's ``test_exported_members.py``)."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[3] / "src" / "palimpsest"
RESOLVERS = SRC / "resolvers"
FACES = sorted(p.name for p in RESOLVERS.iterdir() if (p / "__init__.py").is_file())


def taken_by_the_doors() -> dict[str, set[str]]:
    """The names every module outside ``resolvers/`` takes from each face: imported by name, or
    read as an attribute of the face imported as a module."""
    taken: dict[str, set[str]] = defaultdict(set)
    for path in SRC.rglob("*.py"):
        if path.relative_to(SRC).parts[0] == "resolvers":
            continue
        tree = ast.parse(path.read_text(), str(path))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            if node.module == "palimpsest.resolvers":
                aliases |= {a.asname or a.name: a.name for a in node.names if a.name in FACES}
            elif node.module.removeprefix("palimpsest.resolvers.") in FACES:
                taken[node.module.rsplit(".", 1)[1]] |= {a.name for a in node.names}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
            ):
                taken[aliases[node.value.id]].add(node.attr)
    return taken


def test_there_are_faces() -> None:
    assert {"recall", "facts", "documents", "notes", "cycle", "tenant", "erasure"} <= set(FACES)


@pytest.mark.parametrize("face", FACES)
def test_a_face_exports_what_it_imports_and_each_name_imports(face: str) -> None:
    module = importlib.import_module(f"palimpsest.resolvers.{face}")
    members = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert sorted(module.__all__) == sorted(members)
    for name in module.__all__:
        exec(f"from palimpsest.resolvers.{face} import {name}", {})  # noqa: S102


@pytest.mark.parametrize("face", FACES)
def test_a_face_exports_what_the_doors_take_and_nothing_else(face: str) -> None:
    module = importlib.import_module(f"palimpsest.resolvers.{face}")
    taken = taken_by_the_doors()[face]
    assert sorted(taken - set(module.__all__)) == []
    assert sorted(set(module.__all__) - taken) == []
