"""The size and the floor plan of the house: files, module lines, unit-test mirrors, the
test-to-code ratio, and the figures of issue 44 (modules at the top, loose resolvers, import
circles, upward imports, product tests on the bench, long functions, the coverage floor).

Run from a checkout (or name one): ``python tools/house.py [ROOT]``. Prints one JSON object.
A module ``src/palimpsest/<path>/<name>.py`` has a mirror when
``tests/unit/<path>/test_<name>.py`` exists (``__init__.py`` and ``__main__.py`` are not
counted as modules). Lines are physical lines, blank and comment lines included.

- ``top_modules``: ``.py`` files directly in ``src/palimpsest`` but ``__init__.py``; the old
  paths kept as aliases for one release (``<old>.pyi`` beside ``MOVED`` in ``__init__.py``)
  are no modules and are counted apart as ``alias_paths``.
- ``circles``: strongly connected groups of modules in ``palimpsest``, ``palimpsest_suites``
  and ``palimpsest_bench`` over every import, at the top, in functions and under
  ``TYPE_CHECKING`` (a package's ``__init__`` counts as the package; importing ``a.b`` is not
  an edge to ``a``).
- ``resolver_modules``: modules directly in ``resolvers/`` (the loose ones, beside the planes'
  packages, ``resolver_packages``); ``resolver_mirrors`` counts the mirrors of every module
  under ``resolvers/``, in its packages too.
- ``upward_imports``: an import from a layer into a higher one, layers as ``LAYERS`` names
  them (a module in none is not judged).
- ``product_tests_importing_bench``: files under ``tests/`` that import ``palimpsest_bench``,
  the bench's own tests (a ``bench`` folder, ``test_bench_*``) left out.
"""

from __future__ import annotations

import ast
import json
import re
import statistics
import sys
from pathlib import Path

# Low to high: a module may import its own layer and those below it.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "config", "logs", "paging", "identity", "domain"),
    ("schema", "ontology", "embedding", "cypher", "sqlmem"),
    ("resolvers",),
    ("jobs", "middleware", "readiness", "runtime"),
    ("graphql", "mcp", "integrations", "client", "local"),
    ("app", "server", "cli", "browser"),
]
LONG_FUNCTION = 60


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The known modules ``path`` (module ``name``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            subs = {f"{base}.{a.name}" for a in node.names} & known
            found |= subs or {base}
    return {m for m in found if m in known and m != name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def layer(name: str) -> int | None:
    parts = name.split(".")
    if parts[0] != "palimpsest" or len(parts) < 2:
        return None
    return next((i for i, names in enumerate(LAYERS) if parts[1] in names), None)


def long_functions(path: Path) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (node.end_lineno or node.lineno) - node.lineno + 1 > LONG_FUNCTION
    )


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

    sources = {module_name(p, src.parent): p for p in code}
    for package in (root / "suites" / "palimpsest_suites", root / "bench" / "palimpsest_bench"):
        sources |= {
            module_name(p, package.parent): p
            for p in package.rglob("*.py")
            if "__pycache__" not in p.parts
        }
    known = set(sources)
    graph = {name: imported(path, name, known) for name, path in sources.items()}
    rings = circles(graph)
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if (la := layer(a)) is not None and (lb := layer(b)) is not None and lb > la
    )
    on_bench = sorted(
        str(p.relative_to(root))
        for p in tests
        if "bench" not in p.relative_to(root).parts[:-1]
        and not p.name.startswith("test_bench")
        and re.search(r"^\s*(from|import) palimpsest_bench\b", p.read_text(), re.M)
    )
    makefile = root / "Makefile"
    floor = re.search(r"^COVERAGE_FLOOR\s*[:?]?=\s*(\d+)", makefile.read_text(), re.M)
    return {
        "files": len(every),
        "python_files": len(code),
        "modules": len(modules),
        "top_modules": sum(1 for p in modules if p.parent == src),
        "alias_paths": sum(1 for p in every if p.suffix == ".pyi"),
        "median_module_lines": statistics.median(sizes),
        "max_module_lines": max(sizes),
        "largest_module": str(code[sizes.index(max(sizes))].relative_to(root)),
        "modules_over_400": sum(1 for n in sizes if n > 400),
        "functions_over_60_lines": sum(long_functions(p) for p in code),
        "unit_mirrors": len(mirrored),
        "resolver_modules": sum(1 for p in modules if p.parent == src / "resolvers"),
        "resolver_packages": sum(
            1 for p in (src / "resolvers").iterdir() if (p / "__init__.py").is_file()
        ),
        "resolver_mirrors": sum(1 for p in mirrored if src / "resolvers" in p.parents),
        "circles": len(rings),
        "circle_modules": rings,
        "upward_imports": len(upward),
        "upward_import_edges": upward,
        "product_tests_importing_bench": len(on_bench),
        "coverage_floor": int(floor[1]) if floor else None,
        "code_lines": code_lines,
        "test_lines": test_lines,
        "unit_test_lines": sum(lines(p) for p in unit_tests),
        "test_to_code": round(test_lines / code_lines, 3),
    }


if __name__ == "__main__":
    print(json.dumps(house(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()), indent=1))
