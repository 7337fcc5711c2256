"""The docs' fenced examples and their marks (docs/examples.md, "Running the examples").

A ``python``, ``sh`` or ``bash`` block is preceded by one of ``<!-- example: run -->``,
``<!-- example: run by tests/....py -->`` or ``<!-- example: not run: <reason> -->``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)")
MARK = re.compile(
    r"<!-- example: (?:(?P<run>run)|run by (?P<test>tests/[\w/]+\.py)|not run: [^>]*\S) -->\s*$"
)
RUNNABLE_LANGUAGES = frozenset({"python", "sh", "bash"})


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    before: str  # the line before the fence, stripped
    code: str  # without the fence's indentation

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def mark(self) -> re.Match[str] | None:
        return MARK.search(self.before)

    @property
    def runs_here(self) -> bool:
        mark = self.mark
        return mark is not None and mark["run"] is not None


def example_pages() -> list[Path]:
    """The pages whose examples a reader runs: the README and docs/, less the measurement
    notes (their commands reproduce a figure on a named machine; they are not examples)."""
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return [p for p in pages if "notes" not in p.relative_to(ROOT).parts]


def code_blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    blocks: list[Block] = []
    start: tuple[int, str, str, int] | None = None
    for n, line in enumerate(lines):
        fence = FENCE.match(line)
        if fence is None:
            continue
        if start is None:
            before = lines[n - 1].strip() if n else ""
            start = (n, fence["lang"], before, len(fence["indent"]))
            continue
        first, language, before, indent = start
        code = "".join(f"{body[indent:]}\n" for body in lines[first + 1 : n])
        blocks.append(Block(page, first + 1, language, before, code))
        start = None
    return blocks


def runnable_blocks(page: Path) -> list[Block]:
    return [b for b in code_blocks(page) if b.language in RUNNABLE_LANGUAGES and b.runs_here]
