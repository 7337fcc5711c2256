"""Generate the blocking client from the asyncio one, so the two cannot drift apart.

httpcore's approach (its ``scripts/unasync.py``): the async source is the only one edited; each
line goes through whole-word substitutions (``async def`` to ``def``, ``await`` dropped,
``AsyncX`` to ``X``, ``aclose`` to ``close``, ...) and the result is formatted (imports sorted,
lines joined that now fit) with ruff, the formatter ``make lint`` checks it with.

``python tools/unasync.py`` writes every target; ``--check`` writes nothing and exits 1 naming
each target that differs from what its source generates (``make lint`` runs it).
"""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# source -> target, relative to the checkout.
FILES = {"src/palimpsest/client/aio.py": "src/palimpsest/client/sync.py"}

HEADER = (
    "# Generated from aio.py by tools/unasync.py: edit aio.py, then run `make unasync`\n"
    "# (`make lint` fails while the two differ).\n"
)

# Whole words or phrases, in order; a pattern may use groups.
SUBS: list[tuple[str, str]] = [
    # The docstrings' own words.
    (
        r"the asyncio flavour \(``Client`` in sync.py is generated from this file\)",
        "the blocking flavour (generated from aio.py: edit that file)",
    ),
    (r"``await aclose\(\)`` it", "close it"),
    ("async def", "def"),
    ("async with", "with"),
    ("async for", "for"),
    ("await ", ""),
    ("aclose", "close"),
    ("__aenter__", "__enter__"),
    ("__aexit__", "__exit__"),
    ("__aiter__", "__iter__"),
    ("asynccontextmanager", "contextmanager"),
    ("AsyncIterator", "Iterator"),
    ("Async([A-Z][A-Za-z0-9_]*)", r"\1"),
]


def _whole(pattern: str) -> re.Pattern[str]:
    """``pattern`` as whole words: not inside a longer name on a side that is a word's."""
    before = r"(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z_]", pattern) else ""
    after = r"(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_]$", pattern) else ""
    return re.compile(before + pattern + after)


COMPILED = [(_whole(pattern), repl) for pattern, repl in SUBS]


def unasync_line(line: str) -> str:
    for pattern, repl in COMPILED:
        line = pattern.sub(repl, line)
    return line


def ruff(args: list[str], source: str, target: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--stdin-filename", target, "-"],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise SystemExit(f"unasync: ruff {' '.join(args)} failed on {target}:\n{done.stderr}")
    return done.stdout


def generate(source: str, target: str) -> str:
    """``target``'s text, generated from ``source``'s."""
    text = HEADER + "".join(unasync_line(line) for line in source.splitlines(keepends=True))
    text = ruff(["check", "--quiet", "--select", "I", "--fix", "--exit-zero"], text, target)
    return ruff(["format", "--quiet"], text, target)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for source, target in FILES.items():
        want = generate((ROOT / source).read_text(), target)
        path = ROOT / target
        have = path.read_text() if path.exists() else ""
        if have == want:
            continue
        if check:
            stale.append(target)
            diff = difflib.unified_diff(
                have.splitlines(keepends=True), want.splitlines(keepends=True), target, source
            )
            sys.stderr.writelines(diff)
        else:
            path.write_text(want)
            print(f"unasync: wrote {target} from {source}")
    for target in stale:
        print(f"unasync: {target} is not what its source generates; run `make unasync`")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
