"""Documentation that cannot drift: the settings table, the licence, the docs' operations."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from palimpsest.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def _configuration_table() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("\n## Configuration\n") :]
    return section[: section.index("\n## ", 5)]


def test_every_setting_is_in_the_readme_configuration_table() -> None:
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


def test_license_file_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"  # an SPDX expression
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text
    assert "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
