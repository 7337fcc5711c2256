"""The bench is its own distribution: the product never imports it, and it mounts its
commands on the product's CLI through an entry point."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from palimpsest.cli import PLUGINS, cli_app

ROOT = Path(__file__).resolve().parents[2]


def test_nothing_in_the_product_imports_the_bench() -> None:
    offenders = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [
                f"{path.relative_to(ROOT)}: {n}" for n in names if "palimpsest_bench" in n
            ]
    assert offenders == []


def test_the_product_distribution_does_not_ship_the_bench() -> None:
    product = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert product["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/palimpsest"]
    bench = tomllib.loads((ROOT / "bench" / "pyproject.toml").read_text())
    assert bench["project"]["name"] == "palimpsest-bench"
    assert product["project"]["name"] in bench["project"]["dependencies"]
    assert bench["project"]["entry-points"][PLUGINS] == {
        "bench": "palimpsest_bench.commands:register"
    }


def test_the_installed_bench_mounts_its_groups_on_the_product_command() -> None:
    runner = CliRunner()
    for group in ("bench", "eval"):
        result = runner.invoke(cli_app(), [group, "--help"])
        assert result.exit_code == 0, result.output
    assert "attack" in runner.invoke(cli_app(), ["bench", "--help"]).output
