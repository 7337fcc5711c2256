"""The suites are their own distribution between the product and the bench: the product
imports neither, the suites never import the bench or the tests, and the product's tests reach
the suites without the bench."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def importers(folder: Path, package: str) -> list[str]:
    """The files under ``folder`` that import ``package`` (or a module in it)."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            if any(n == package or n.startswith(package + ".") for n in names):
                found.append(str(path.relative_to(ROOT)))
                break
    return found


def test_the_product_never_imports_the_suites() -> None:
    assert importers(ROOT / "src", "palimpsest_suites") == []


def test_the_suites_import_neither_the_bench_nor_the_tests() -> None:
    suites = ROOT / "suites"
    assert importers(suites, "palimpsest_suites")  # the tree is there and read
    assert importers(suites, "palimpsest_bench") == []
    assert importers(suites, "tests") == []


def test_the_products_tests_import_the_bench_only_in_the_benchs_own_tests() -> None:
    bench_own = re.compile(r"(^|/)(bench/|test_bench_)")
    found = [p for p in importers(ROOT / "tests", "palimpsest_bench") if not bench_own.search(p)]
    assert importers(ROOT / "tests", "palimpsest_suites")
    assert found == []


def test_the_distributions_depend_product_then_suites_then_bench() -> None:
    product = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    suites = tomllib.loads((ROOT / "suites" / "pyproject.toml").read_text())["project"]
    bench = tomllib.loads((ROOT / "bench" / "pyproject.toml").read_text())["project"]
    assert suites["name"] == "palimpsest-suites"
    assert product["name"] in suites["dependencies"]
    assert suites["name"] in bench["dependencies"]
    assert not any(d.startswith("palimpsest-bench") for d in suites["dependencies"])
