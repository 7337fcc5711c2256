"""``tools/unasync.py``: the blocking client is what the asyncio one generates, and an edit to
one side alone is caught (``make lint`` runs ``--check``)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "unasync.py"
SOURCE, TARGET = "src/palimpsest/client/aio.py", "src/palimpsest/client/sync.py"


@pytest.fixture(scope="module")
def unasync() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync", TOOL)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("    async def memory(self) -> AsyncClient:", "    def memory(self) -> Client:"),
        ("        return await self.call(op.ME)", "        return self.call(op.ME)"),
        ("        await self.transport.aclose()", "        self.transport.close()"),
        ("    async def __aexit__(", "    def __exit__("),
        ("http: httpx.AsyncClient | None", "http: httpx.Client | None"),
        ("async with AsyncClient() as c:", "with Client() as c:"),
        # Whole words only: other names that merely contain the words stay.
        ("import asyncio; awaited = acloses", "import asyncio; awaited = acloses"),
        ("AsyncioThing, async_defaults", "AsyncioThing, async_defaults"),
    ],
)
def test_each_line_loses_its_asyncio_words(unasync: ModuleType, line: str, want: str) -> None:
    assert unasync.unasync_line(line) == want


def test_the_blocking_client_is_what_the_asyncio_one_generates(unasync: ModuleType) -> None:
    want = unasync.generate((ROOT / SOURCE).read_text(), TARGET)
    assert (ROOT / TARGET).read_text() == want
    assert want.startswith(unasync.HEADER)


def test_a_method_added_to_the_asyncio_client_appears_in_the_blocking_one(
    unasync: ModuleType,
) -> None:
    source = (
        (ROOT / SOURCE)
        .read_text()
        .replace(
            "\n\n__all__",
            "\n\n    async def ping(self) -> str:\n        return await self.call(op.HEALTH)\n\n\n"
            "__all__",
        )
    )
    generated = unasync.generate(source, TARGET)
    assert "    def ping(self) -> str:\n        return self.call(op.HEALTH)\n" in generated
    assert generated != (ROOT / TARGET).read_text()


def test_check_exits_nonzero_naming_a_target_that_drifted(tmp_path: Path) -> None:
    # ruff sorts the imports by what the tree holds: the client package as it is.
    client = Path(SOURCE).parent
    shutil.copytree(ROOT / client, tmp_path / client, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "unasync.py").write_text(TOOL.read_text())
    check = [sys.executable, str(tmp_path / "tools" / "unasync.py"), "--check"]
    assert subprocess.run(check, capture_output=True, cwd=tmp_path).returncode == 0
    drifted = (tmp_path / TARGET).read_text().replace("def usage(", "def usage_of(")
    (tmp_path / TARGET).write_text(drifted)
    done = subprocess.run(check, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    assert TARGET in done.stdout
    assert "-    def usage_of(" in done.stderr  # the diff, what is there against what is wanted
    # Without --check the target is written back.
    subprocess.run(check[:-1], check=True, capture_output=True, cwd=tmp_path)
    assert (tmp_path / TARGET).read_text() == (ROOT / TARGET).read_text()
