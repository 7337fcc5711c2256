"""Every `pip install` in the docs installs from this checkout (a directory with a
pyproject.toml, or a wheel `make dist` builds) with extras that distribution declares, or a
third-party pin: never a bare `palimpsest...` name, which on the public index is someone
else's. The clean-venv install itself: tests/install/test_client_install.py."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "client" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
COMMAND = re.compile(r"pip install ([^`\n#]+)")
WHEEL = re.compile(r"dist/(?P<name>[a-z_]+)-(?P<version>[^-]+)-py3-none-any\.whl")


def distributions() -> dict[str, tuple[str, set[str]]]:
    """Each local distribution's folder -> (name, extras)."""
    found = {}
    for folder in (".", "client", "bench"):
        project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]
        found[folder] = (project["name"], set(project.get("optional-dependencies", {})))
    return found


def requirements(command: str) -> list[str]:
    words = shlex.split(command.replace("\\", ""))
    wanted, skip = [], False
    for word in words:
        if word in ("&&", "||", ";", "|"):
            break
        if skip:
            skip = False
        elif word in ("-r", "--requirement", "-w", "--wheel-dir", "--report", "--only-binary"):
            skip = True
        elif not word.startswith("-"):
            wanted.append(word)
    return wanted


def problem(requirement: str) -> str | None:
    local = distributions()
    target, _, extras_part = requirement.partition("[")
    extras = set(extras_part.rstrip("]").split(",")) - {""}
    if wheel := WHEEL.fullmatch(target):
        by_name = {name.replace("-", "_"): e for name, e in local.values()}
        declared = by_name.get(wheel["name"])
        return None if declared is not None and extras <= declared else "no such wheel/extra"
    if target.startswith(".") or "/" in target:
        folder = str(Path(target).as_posix()).removeprefix("./") or "."
        if folder not in local:
            return f"{folder!r} is not a distribution of the checkout"
        missing = extras - local[folder][1]
        return f"undeclared extras {sorted(missing)}" if missing else None
    if target.lower().startswith("palimpsest"):
        return "a bare palimpsest name installs someone else's package from the index"
    return None if "==" in target else "an unpinned third-party package"


def test_every_install_command_in_the_docs_installs_from_the_checkout() -> None:
    found, bad = 0, []
    for page in PAGES:
        for command in COMMAND.findall(page.read_text()):
            for requirement in requirements(command):
                found += 1
                if (why := problem(requirement)) is not None:
                    bad.append(f"{page.relative_to(ROOT)}: {requirement}: {why}")
    assert found >= 8
    assert bad == []


def test_the_checker_refuses_the_names_the_docs_used_to_give() -> None:
    assert problem("palimpsest[langgraph]") is not None
    assert problem("palimpsest") is not None
    assert problem("./client[nope]") is not None
    assert problem("./client[langgraph]") is None
    assert problem("dist/palimpsest_memory_client-0.1.0-py3-none-any.whl[adk]") is None
