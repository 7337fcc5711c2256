"""The CLI's start-up imports only what the command needs (docs/notes/distributions.md): the
command modules register their commands without the settings' models, the client, asyncio or
the installed plugins, which the commands import when they run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Loaded by a command's body when it runs, never by the start-up itself.
HEAVY = ["pydantic", "pydantic_settings", "palimpsest.config", "httpx", "palimpsest.client",
         "asyncio", "rich", "importlib.metadata", "palimpsest_bench", "neo4j",
         "importlib.abc", "tempfile"]  # fmt: skip

PROBE = """
import contextlib, io, json, sys
import palimpsest.cli as cli
at_import = sorted(sys.modules)
sys.argv[0] = "palimpsest"
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    cli.main()
print(json.dumps({"at_import": at_import, "after_help": sorted(sys.modules)}))
"""


def loaded(*argv: str, env: dict[str, str] | None = None) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True, env=env
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def heavy_in(modules: object) -> list[str]:
    assert isinstance(modules, list)
    return [m for m in HEAVY if m in modules]


def test_importing_the_cli_loads_none_of_what_its_commands_need() -> None:
    assert heavy_in(loaded("memory", "get", "--help")["at_import"]) == []


def test_a_builtin_commands_help_loads_no_plugin_and_no_settings() -> None:
    probe = loaded("memory", "get", "--help")
    assert "palimpsest_bench" not in probe["after_help"]  # type: ignore[operator]
    assert "pydantic_settings" not in probe["after_help"]  # type: ignore[operator]


def test_version_mounts_no_plugin() -> None:
    assert "palimpsest_bench" not in loaded("--version")["after_help"]  # type: ignore[operator]


def test_a_quick_look_with_url_and_token_in_the_environment_reads_no_settings() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    # Port 9 refuses: the look fails (exit 1) once the client has been made.
    env["PALIMPSEST_SERVER_URL"] = "http://127.0.0.1:9"
    probe = loaded("memory", "get", "k", env={**env, "PALIMPSEST_RUN_TOKEN": "t"})
    assert "palimpsest.client" in probe["after_help"]  # type: ignore[operator]
    assert "pydantic_settings" not in probe["after_help"]  # type: ignore[operator]
    # Nor what this one look does not use: the other operations' result types (built on first
    # use), asyncio (the async transport's) and httpx's own command line (click, rich, pygments).
    assert "palimpsest.client.note_results" in probe["after_help"]  # type: ignore[operator]
    unused = ["palimpsest.client.results", "palimpsest.client.recall_results", "asyncio"]
    unused += ["click", "rich", "pygments"]
    # Nor typer, nor its pydantic: a plain look goes the short way in (cli/shortcut.py).
    unused += ["typer", "pydantic", "palimpsest.cli.registry", "palimpsest.cli.people"]
    assert [m for m in unused if m in probe["after_help"]] == []  # type: ignore[operator]
    # Without the token in the environment the settings are read (and name what is missing).
    probe = loaded("memory", "get", "k", env=env)
    assert "pydantic_settings" in probe["after_help"]  # type: ignore[operator]


def test_the_plugins_are_mounted_for_the_full_help_and_a_plugins_command() -> None:
    from palimpsest import cli

    assert {"memory", "serve", "token", "term-peaks", "context"} <= cli.builtin_commands()
    assert "bench" not in cli.builtin_commands()
    assert "palimpsest_bench" in loaded("--help")["after_help"]  # type: ignore[operator]
    assert "palimpsest_bench" in loaded("bench", "--help")["after_help"]  # type: ignore[operator]
