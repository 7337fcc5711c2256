"""The size of the house: files, module lines, unit-test mirrors and the test-to-code ratio.

Run from a checkout (or name one): ``python tools/house.py [ROOT]``. Prints one JSON object.
A module ``src/palimpsest/<path>/<name>.py`` has a mirror when
``tests/unit/<path>/test_<name>.py`` exists (``__init__.py`` and ``__main__.py`` are not
counted as modules). Lines are physical lines, blank and comment lines included.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def house(root: Path) -> dict[str, object]:
    src = root / "src" / "palimpsest"
    unit = root / "tests" / "unit"
    every = [p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    code = sorted(p for p in every if p.suffix == ".py")
    modules = [p for p in code if p.name not in ("__init__.py", "__main__.py")]
    sizes = [lines(p) for p in code]
    mirrored = [
        p for p in modules if (unit / p.parent.relative_to(src) / f"test_{p.name}").is_file()
    ]
    tests = [p for p in (root / "tests").rglob("*.py") if "__pycache__" not in p.parts]
    unit_tests = [p for p in tests if unit in p.parents]
    code_lines, test_lines = sum(sizes), sum(lines(p) for p in tests)
    return {
        "files": len(every),
        "python_files": len(code),
        "modules": len(modules),
        "median_module_lines": statistics.median(sizes),
        "max_module_lines": max(sizes),
        "largest_module": str(code[sizes.index(max(sizes))].relative_to(root)),
        "modules_over_400": sum(1 for n in sizes if n > 400),
        "unit_mirrors": len(mirrored),
        "resolver_modules": sum(1 for p in modules if p.parent == src / "resolvers"),
        "resolver_mirrors": sum(1 for p in mirrored if p.parent == src / "resolvers"),
        "code_lines": code_lines,
        "test_lines": test_lines,
        "unit_test_lines": sum(lines(p) for p in unit_tests),
        "test_to_code": round(test_lines / code_lines, 3),
    }


if __name__ == "__main__":
    print(json.dumps(house(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()), indent=1))
