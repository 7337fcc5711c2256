"""The client distribution (client/pyproject.toml) ships the files the server distribution
leaves out, and nothing in them imports the server's modules or its dependencies: what it
declares (httpx, and each adapter's SDK under its extra) is all it needs. The clean-venv install
that proves it end to end is tests/install/test_client_install.py."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import palimpsest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
CLIENT = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())
SERVER = tomllib.loads((ROOT / "pyproject.toml").read_text())
# An adapter module may import its runtime's SDK: the import roots each extra provides.
EXTRA_IMPORTS = {
    "langgraph": {"langgraph"},
    "anthropic": {"anthropic"},
    "claude_agent": {"claude_agent_sdk"},
    "adk": {"google"},
    "hermes": {"agent"},
}


def client_files() -> list[Path]:
    shipped = CLIENT["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["ships"]
    files: list[Path] = []
    for source in shipped:
        path = (ROOT / "client" / source).resolve()
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from palimpsest import values` imports the module palimpsest.values.
            names |= {
                f"{node.module}.{a.name}" if is_module(f"{node.module}.{a.name}") else node.module
                for a in node.names
            }
    return names


def is_module(name: str) -> bool:
    path = SRC.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_the_server_wheel_leaves_out_exactly_what_the_client_wheel_ships() -> None:
    shipped = CLIENT["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["ships"]
    assert {f"src/{target}" for target in shipped.values()} == set(
        SERVER["tool"]["hatch"]["build"]["targets"]["wheel"]["exclude"]
    )
    assert all(f"../src/{target}" == source for source, target in shipped.items())
    assert (
        f"{CLIENT['project']['name']}=={palimpsest.__version__}"
        in (SERVER["project"]["dependencies"])
    )


def test_the_client_files_import_nothing_of_the_servers() -> None:
    own = {module_name(path) for path in client_files()}
    assert {"palimpsest", "palimpsest.errors", "palimpsest.client"} <= own
    declared = {"httpx"}
    offenders = []
    for path in client_files():
        name = module_name(path)
        allowed = declared | EXTRA_IMPORTS.get(name.rpartition(".")[2], set())
        for module in imported(path):
            root = module.partition(".")[0]
            if root == "palimpsest":
                ok = module in own
            else:
                ok = root in sys.stdlib_module_names or root in allowed
            if not ok:
                offenders.append(f"{name}: {module}")
    assert offenders == []


def test_every_adapter_is_an_extra_of_the_client() -> None:
    extras = set(CLIENT["project"]["optional-dependencies"])
    assert {name.replace("_", "-") for name in EXTRA_IMPORTS} == extras
    assert [d.partition(">")[0] for d in CLIENT["project"]["dependencies"]] == ["httpx"]
