"""Documentation that cannot drift: the settings table, the licence, the docs' operations, the
MCP tool table, which examples run, and the architecture's tree of ``src/``."""

from __future__ import annotations

import asyncio
import re
import tomllib
from pathlib import Path
from typing import Any

from palimpsest.config import flat_names
from tests.docs_examples import RUNNABLE_LANGUAGES, code_blocks, example_pages, runnable_blocks

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _configuration_table() -> str:
    page = (DOCS / "configuration.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `PALIMPSEST_")]
    assert rows, "docs/configuration.md has no settings table"
    return "\n".join(rows)


def test_every_setting_is_in_the_configuration_table() -> None:
    table = _configuration_table()
    missing = [
        f"PALIMPSEST_{name.upper()}"
        for name in flat_names()
        if f"`PALIMPSEST_{name.upper()}`" not in table
    ]
    assert missing == []


def test_the_table_names_no_setting_that_does_not_exist() -> None:
    listed = set(re.findall(r"`(PALIMPSEST_[A-Z0-9_]+)`", _configuration_table()))
    assert listed == {f"PALIMPSEST_{name.upper()}" for name in flat_names()}


def test_every_example_operations_file_is_linked_from_a_page() -> None:
    # A file no page links to is an example nobody finds (mkdocs copies it unlisted).
    pages = "\n".join(page.read_text() for page in DOCS.rglob("*.md"))
    files = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.glob("operations/*.graphql"))
    assert files, "docs/operations holds no example operations"
    linked = set(re.findall(r"\]\((?:\.\./)*(operations/[^)#\s]+\.graphql)\)", pages))
    assert [name for name in files if name not in linked] == []


def test_license_file_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"  # an SPDX expression
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text
    assert "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text


# --- The MCP tool table and the agents page against the server's own tool list ---------------

TOOL_ROW = re.compile(r"^\| `(\w+)` \| (.*?) \| (✓?) ?\| (✓?) ?\| (✓?) ?\| (.*) \|$", re.M)


def _listed_tools() -> list[Any]:
    from palimpsest.mcp import build_server

    async def no_caller(_: Any) -> Any:
        raise AssertionError("listing the tools calls nothing")

    return asyncio.run(build_server(no_caller).list_tools())


def _tool_table() -> dict[str, tuple[set[str], tuple[bool, bool, bool], set[str]]]:
    page = (DOCS / "reference" / "mcp.md").read_text()
    rows = TOOL_ROW.findall(page)
    assert rows, "docs/reference/mcp.md has no tool table"
    return {
        name: (
            set(re.findall(r"`(\w+)", fields)),
            (r == "✓", d == "✓", i == "✓"),
            set(re.findall(r"`(\w+)`", keys)),
        )
        for name, fields, r, d, i, keys in rows
    }


def test_the_mcp_tool_table_is_the_servers_tool_list() -> None:
    table = _tool_table()
    tools = _listed_tools()
    assert sorted(table) == sorted(t.name for t in tools)
    for tool in tools:
        _, hints, keys = table[tool.name]
        a = tool.annotations
        assert a is not None, tool.name
        assert hints == (
            bool(a.read_only_hint),
            bool(a.destructive_hint),
            bool(a.idempotent_hint),
        ), f"{tool.name}: R, D, I in the table differ from the tool's hints"
        assert tool.output_schema is not None, tool.name
        assert keys == set(tool.output_schema["properties"]), f"{tool.name}: result keys"


def test_the_mcp_tool_table_names_real_graphql_fields() -> None:
    from palimpsest.graphql.schema import build_schema

    schema = build_schema()._schema
    roots = [schema.query_type, schema.mutation_type]
    known = {name for root in roots if root is not None for name in root.fields}
    for tool, (fields, _, _) in _tool_table().items():
        assert fields, tool
        assert fields <= known, f"{tool}: {sorted(fields - known)} is no root field"


def test_the_agents_page_names_every_tool() -> None:
    page = (DOCS / "agents.md").read_text()
    mcp = page.split("## MCP: plugging an agent in", 1)[1].split("\n- ", 1)[0]
    named = set(re.findall(r"`(\w+)`", mcp))
    assert sorted(t.name for t in _listed_tools() if t.name not in named) == []


# --- Which examples run (tests/docs_examples.py; docs/examples.md, "Running the examples") ----


def test_every_python_and_shell_example_says_whether_it_runs() -> None:
    unmarked = [
        block.where
        for page in example_pages()
        for block in code_blocks(page)
        if block.language in RUNNABLE_LANGUAGES and block.mark is None
    ]
    assert unmarked == [], "mark each: <!-- example: run | run by tests/... | not run: why -->"


def test_an_example_run_by_its_own_test_names_a_test_that_reads_its_page() -> None:
    for page in example_pages():
        for block in code_blocks(page):
            mark = block.mark
            if mark is None or mark["test"] is None:
                continue
            test = ROOT / mark["test"]
            assert test.is_file(), f"{block.where} names {mark['test']}, which does not exist"
            assert page.name in test.read_text(), f"{mark['test']} never reads {page.name}"


def test_the_suite_has_examples_to_run() -> None:
    # A mark mistyped everywhere would leave the integration test nothing to run.
    assert sum(len(runnable_blocks(page)) for page in example_pages()) >= 6


SRC = ROOT / "src" / "palimpsest"


def _architecture_tree() -> set[str]:
    """The paths docs/architecture.md's tree names under ``src/palimpsest/``: an entry is a
    ``name/`` or ``name.py`` opening a line at two spaces (a top-level one) or four (inside
    the entry above it)."""
    page = (DOCS / "architecture.md").read_text()
    lines = page.split("```\nsrc/palimpsest/\n", 1)[1].splitlines()
    named: set[str] = set()
    parents: list[str] = []
    for line in lines:
        if not line.startswith(" "):
            break
        # An entry at two or four spaces; a description's next lines are indented further.
        entry = re.match(r"( {2}| {4})([\w.]+/|\w+\.py) ", line + " ")
        if entry is None:
            continue
        depth = len(entry[1]) // 2 - 1
        parents = [*parents[:depth], entry[2].rstrip("/")]
        named.add("/".join(parents))
    assert named, "docs/architecture.md has no tree of src/palimpsest/"
    return named


def _packages_and_modules(folder: Path) -> set[str]:
    return {
        str(p.relative_to(SRC)).removesuffix(".py")
        for p in folder.iterdir()
        if (p.is_dir() and (p / "__init__.py").is_file())
        or (p.suffix == ".py" and p.name not in ("__init__.py", "__main__.py"))
    }


def test_every_package_and_top_level_module_is_in_the_architecture_tree() -> None:
    named = {n.removesuffix(".py") for n in _architecture_tree()}
    assert _packages_and_modules(SRC) - named == set()
    # A package whose children the tree lists lists all its subpackages.
    for parent in {n.rsplit("/", 1)[0] for n in named if "/" in n}:
        subpackages = {n for n in _packages_and_modules(SRC / parent) if (SRC / n).is_dir()}
        assert subpackages - named == set(), parent


def test_the_architecture_tree_names_nothing_that_does_not_exist() -> None:
    missing = [
        n for n in _architecture_tree() if not (SRC / n).is_dir() and not (SRC / n).is_file()
    ]
    assert missing == []
