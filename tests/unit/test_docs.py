"""Documentation that cannot drift: the settings table, the licence, the docs' operations."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from palimpsest.config import Settings

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
        for name in Settings.model_fields
        if f"`PALIMPSEST_{name.upper()}`" not in table
    ]
    assert missing == []


def test_the_table_names_no_setting_that_does_not_exist() -> None:
    listed = set(re.findall(r"`(PALIMPSEST_[A-Z0-9_]+)`", _configuration_table()))
    assert listed == {f"PALIMPSEST_{name.upper()}" for name in Settings.model_fields}


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
