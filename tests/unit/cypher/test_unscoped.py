"""Unscoped statements are closed by type: only the schema and queue modules make them.

A ``Statement`` has no argument that unscopes it (mypy rejects ``scoped=False``); the two
unscoped kinds are ``SchemaStatement`` and ``CrossScopeStatement``. This test reads the
product's, the suites' and the bench's source and fails on any other module that makes one,
subclasses ``Statement`` or passes ``scoped`` at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from palimpsest.cypher.driver.executor import CrossScopeStatement, SchemaStatement, Statement

ROOT = Path(__file__).resolve().parents[3]
SOURCES = (ROOT / "src", ROOT / "bench", ROOT / "suites")
EXECUTOR = "src/palimpsest/cypher/driver/executor.py"
MAKERS = {
    "SchemaStatement": {
        "src/palimpsest/cypher/schema.py",
        # A model migration's record, slot indexes and batches (palimpsest reembed).
        "src/palimpsest/cypher/embedding_slots.py",
        # The shard directory: tenant -> shard, the server's bookkeeping on the designated shard.
        "src/palimpsest/cypher/shards/directory.py",
    },
    "CrossScopeStatement": {
        "src/palimpsest/cypher/queue.py",
        "src/palimpsest/cypher/sweep.py",  # the sweep's walk: scope ids in key order
        # Erasure's search for the shared scopes a person wrote in: scope ids only.
        "src/palimpsest/cypher/authored.py",
        EXECUTOR,  # the bookmark wait, which reads no row
        # The suites' and the bench's audits of their own runs: counts per status and per
        # scope key, no content.
        "suites/palimpsest_suites/crash.py",
        "bench/palimpsest_bench/recall_load.py",
    },
}
STATEMENT_KINDS = {"Statement", *MAKERS}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def violations(path: str, tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (kind := _name(node.func)) in STATEMENT_KINDS:
            if any(k.arg == "scoped" for k in node.keywords) or len(node.args) > 2:
                found.append(f"{path}:{node.lineno}: {kind} takes a name and a text only")
            if kind in MAKERS and path not in MAKERS[kind]:
                found.append(f"{path}:{node.lineno}: {kind} made outside {sorted(MAKERS[kind])}")
        bases = node.bases if isinstance(node, ast.ClassDef) and path != EXECUTOR else []
        if any(_name(b) in STATEMENT_KINDS for b in bases):
            assert isinstance(node, ast.ClassDef)
            found.append(f"{path}:{node.lineno}: {node.name} subclasses a statement kind")
    return found


def test_only_the_schema_and_queue_modules_make_unscoped_statements() -> None:
    files = [p for root in SOURCES for p in root.rglob("*.py")]
    assert len(files) > 100
    found = []
    for file in files:
        path = file.relative_to(ROOT).as_posix()
        found += violations(path, ast.parse(file.read_text(), path))
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        'S = Statement("S", "MATCH (n) RETURN n", scoped=False)',
        'S = Statement("S", "MATCH (n) RETURN n", False)',
        'S = CrossScopeStatement("S", "MATCH (n) RETURN count(n) AS n")',
        'S = executor.SchemaStatement("S", "CREATE INDEX i IF NOT EXISTS FOR (n:X) ON (n.p)")',
        "class Loose(Statement): pass",
    ],
)
def test_each_way_of_making_one_elsewhere_is_caught(source: str) -> None:
    assert violations("src/palimpsest/resolvers/anything.py", ast.parse(source)) != []


def test_the_kinds_run_where_they_belong() -> None:
    assert Statement("S", "RETURN 1 AS one").scoped
    assert not SchemaStatement("S", "RETURN 1 AS one").scoped
    assert not CrossScopeStatement("S", "RETURN 1 AS one").scoped
    with pytest.raises(TypeError):
        Statement("S", "RETURN 1 AS one", False)  # type: ignore[call-arg]
