"""Every command the docs and the Makefile name exists (a lost one broke `make install`)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from palimpsest.cli import cli_app

COMMANDS = [
    ["serve"],
    ["mcp"],
    ["ingest"],
    ["term-peaks"],
    ["judge"],
    ["memory", "get"],
    ["memory", "set"],
    ["memory", "search"],
    ["memory", "history"],
    ["context"],
    ["token", "mint"],
    ["neo4j", "install"],
    ["neo4j", "lock"],
    ["neo4j", "start"],
    ["neo4j", "stop"],
    ["neo4j", "status"],
    ["graphiql", "install"],
    ["postgres", "start"],
    ["bench", "recall-latency"],
    ["eval", "locomo"],
    ["eval", "beam"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_command_exists(command: list[str]) -> None:
    result = CliRunner().invoke(cli_app(), [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_version() -> None:
    result = CliRunner().invoke(cli_app(), ["--version"])
    assert result.exit_code == 0
    assert result.output.startswith("palimpsest ")


@pytest.mark.parametrize("other", [["--cutover"], ["--drop-old"], ["--model", "m"]])
def test_reembed_abort_goes_alone(other: list[str]) -> None:
    """Refused before any setting is read or the database touched."""
    result = CliRunner().invoke(cli_app(), ["reembed", "--abort", *other])
    assert result.exit_code == 2
    assert "--abort goes alone" in result.output
