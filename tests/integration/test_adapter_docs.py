"""The runtime adapters' pages run as written against the real server: the Claude Agent SDK and
ADK examples as scripts, the Hermes plugin through Hermes's own plugin loader."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from agent.memory_manager import MemoryManager
from plugins.memory import load_memory_provider

from palimpsest.integrations.hermes import PalimpsestMemoryProvider
from palimpsest.resolvers.services import Services
from tests.integration.runtimes import Run, consolidated, new_run

PAGES = Path(__file__).resolve().parents[2] / "docs" / "reference"


def example(page: str) -> str:
    [code] = re.findall(r"```python\n(.*?)```", (PAGES / page).read_text(), re.S)
    return str(code)


def run_page(page: str) -> None:
    exec(compile(example(page), str(PAGES / page), "exec"), {"__name__": "__main__"})  # noqa: S102


@pytest.fixture
def run(live_server_url: str, token: Callable[..., str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """A fresh user's run, named to the pages through the environment they read."""
    fresh = new_run(token, agent="docs")
    monkeypatch.setenv("PALIMPSEST_SERVER_URL", live_server_url)
    monkeypatch.setenv("PALIMPSEST_RUN_TOKEN", fresh.token)
    return fresh


async def test_the_claude_agent_example_runs(
    run: Run, svc: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    # The page calls asyncio.run: run it off this test's loop.
    await asyncio.to_thread(run_page, "claude-agent.md")
    assert capsys.readouterr().out.splitlines() == ["{} Banked(accepted=2, duplicates=0)"]
    assert await consolidated(svc, run) == 2


async def test_the_adk_example_runs(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    await asyncio.to_thread(run_page, "adk.md")
    assert capsys.readouterr().out.splitlines() == [
        "Banked(accepted=2, duplicates=0)",
        "Banked(accepted=0, duplicates=2)",
        "[]",
    ]


async def test_the_hermes_plugin_loads_and_runs(
    run: Run, svc: Services, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugins" / "palimpsest"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(example("hermes.md"))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    provider = load_memory_provider("palimpsest")
    assert isinstance(provider, PalimpsestMemoryProvider)
    try:
        drive(provider)
        assert await consolidated(svc, run) == 2
        block = provider.prefetch("where does Ines live")
        assert re.search(r"\[chunk:\w+\] user: My sister Ines lives in Coimbra\.", block)
    finally:
        provider.shutdown()


def drive(provider: PalimpsestMemoryProvider) -> None:
    """A turn through Hermes's own manager, as a Hermes run makes it."""
    manager = MemoryManager()
    manager.add_provider(provider)
    manager.initialize_all("s-1", platform="cli")
    manager.sync_all("My sister Ines lives in Coimbra.", "Noted.")
    assert manager.flush_pending(timeout=60)
    assert provider.last.accepted == 2
