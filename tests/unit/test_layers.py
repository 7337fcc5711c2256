"""The layers, checked on the import graph: doors do not reach the database layer, only
``cypher/`` and the managed servers touch the driver, and the lower modules never import
the core or the doors."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "palimpsest"


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def modules(*parts: str) -> list[Path]:
    out: list[Path] = []
    for part in parts:
        target = SRC / part
        out += sorted(target.rglob("*.py")) if target.is_dir() else [target]
    return out


def offenders(paths: list[Path], *prefixes: str) -> list[str]:
    return [
        f"{p.relative_to(SRC)} imports {m}"
        for p in paths
        for m in sorted(imports_of(p))
        if any(m == x or m.startswith(x + ".") for x in prefixes)
    ]


@pytest.mark.parametrize("door", ["graphql", "mcp", "cli", "integrations"])
def test_doors_do_not_reach_the_database_layer(door: str) -> None:
    assert offenders(modules(door), "palimpsest.cypher", "neo4j") == []


def resolver_submodules_imported(path: Path) -> list[str]:
    """The modules inside a package of ``resolvers/`` that ``path`` imports (a face, the
    package's ``__init__``, or a loose module directly in ``resolvers/`` is not one)."""
    found = []
    where = path.relative_to(SRC) if SRC in path.parents else path.name
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        inside = {
            ".".join(parts[:4])
            for parts in (name.split(".") for name in names)
            if parts[:2] == ["palimpsest", "resolvers"]
            and len(parts) >= 4
            and (SRC / "resolvers" / parts[2]).is_dir()
            and (
                SRC.joinpath(*parts[1:4]).with_suffix(".py").is_file()
                or SRC.joinpath(*parts[1:4]).is_dir()
            )
        }
        found += [f"{where}:{node.lineno} imports {name}" for name in sorted(inside)]
    return found


def test_the_doors_import_the_resolvers_through_their_faces_only() -> None:
    """Outside ``resolvers/``, a plane is reached through its face (``resolvers/<plane>/``'s
    ``__all__``), never one of its modules."""
    doors = [p for p in modules(".") if p.relative_to(SRC).parts[0] != "resolvers"]
    assert [hit for p in doors for hit in resolver_submodules_imported(p)] == []


def test_the_check_sees_a_door_importing_a_plane_module(tmp_path: Path) -> None:
    door = tmp_path / "door.py"
    door.write_text(
        "from palimpsest.resolvers import recall, services\n"
        "from palimpsest.resolvers.recall import planner\n"
        "from palimpsest.resolvers.facts.ledger import history\n"
    )
    hits = [h.split(" imports ")[1] for h in resolver_submodules_imported(door)]
    assert hits == ["palimpsest.resolvers.recall.planner", "palimpsest.resolvers.facts.ledger"]


def test_at_most_five_modules_stay_loose_in_resolvers() -> None:
    loose = [p.name for p in (SRC / "resolvers").glob("*.py") if p.name != "__init__.py"]
    assert len(loose) <= 5, loose


def test_only_cypher_and_the_managed_server_touch_the_driver() -> None:
    allowed = ("cypher", "local")
    rest = [p for p in modules(".") if p.relative_to(SRC).parts[0] not in allowed]
    assert offenders(rest, "neo4j") == []


def test_lower_modules_never_import_the_core_or_the_doors() -> None:
    lower = modules("schema", "identity", "domain", "ontology", "embedding")
    assert offenders(lower, "palimpsest.resolvers", "palimpsest.graphql", "palimpsest.mcp") == []


def test_schema_holds_types_without_io_or_statements() -> None:
    """``schema/`` is the domain's types: applying the constraints and indexes is
    ``cypher/indexes.py``'s, and no schema module reaches a statement, the driver or a file."""
    io = ("palimpsest.cypher", "neo4j", "psycopg", "sqlite3", "httpx", "os", "pathlib", "shutil")
    assert modules("schema")
    assert offenders(modules("schema"), *io) == []


def test_roles_are_checked_through_the_named_predicates_only() -> None:
    """``identity/permissions.py`` names every role check; elsewhere roles are only shown."""
    found = []
    for path in modules("."):
        if path.relative_to(SRC).parts[0] == "identity":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            role_flag = isinstance(node, ast.Attribute) and node.attr in ROLE_FLAGS
            role_test = isinstance(node, ast.Compare) and any(
                isinstance(c, ast.Attribute) and c.attr == "roles" for c in node.comparators
            )
            if role_flag or role_test:
                found.append(f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}")
    assert found == []


ROLE_FLAGS = {"is_admin", "is_operator"}


def test_recall_requests_are_built_in_the_core_only() -> None:
    """Only ``resolvers/`` assembles a ``RecallRequest``: the doors pass what they were asked."""
    found = [
        f"{p.relative_to(SRC)}:{node.lineno}"
        for p in modules(".")
        if p.relative_to(SRC).parts[0] != "resolvers"
        for node in ast.walk(ast.parse(p.read_text(), str(p)))
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "RecallRequest"
    ]
    assert found == []


def test_the_client_imports_nothing_of_the_server_but_the_error_tree() -> None:
    """``palimpsest.client`` runs beside any runtime: httpx and ``errors.py``, nothing else."""
    found = [
        f"{p.relative_to(SRC)} imports {m}"
        for p in modules("client")
        for m in sorted(imports_of(p))
        if (m == "neo4j" or m.startswith(("neo4j.", "palimpsest.")))
        and not m.startswith("palimpsest.client")
        and m != "palimpsest.errors"
    ]
    assert modules("client")
    assert found == []


def test_integrations_import_the_client_not_the_server() -> None:
    """An integration runs inside the runtime's process: over the client's transport and the
    pure key layout, never the core, the doors or the driver."""
    server = ("palimpsest.resolvers", "palimpsest.graphql", "palimpsest.cypher", "neo4j")
    assert modules("integrations")
    assert offenders(modules("integrations"), *server) == []


DOMAIN_MAY_IMPORT = (
    "palimpsest.domain",
    "palimpsest.errors",
    "palimpsest.config",
    "palimpsest.identity",
    # The note-key grammar the client distribution shares with the server (stdlib only).
    "palimpsest.notekeys",
)


def test_the_domain_imports_only_errors_config_and_identity() -> None:
    """``domain/`` is the pure rules: besides itself, the standard library and third-party
    packages, it sees only the error tree, the settings, the identity types and the note-key
    grammar it shares with the client."""
    found = [
        f"{p.relative_to(SRC)} imports {m}"
        for p in modules("domain")
        for m in sorted(imports_of(p))
        if (m == "palimpsest" or m.startswith("palimpsest."))
        and not any(m == x or m.startswith(x + ".") for x in DOMAIN_MAY_IMPORT)
    ]
    assert modules("domain")
    assert found == []


def test_the_jobs_are_not_imported_by_the_core_or_the_rules() -> None:
    """The processes drive the core: the core and the rules below it never import them."""
    below = modules("domain", "ontology", "embedding", "schema", "identity", "cypher", "resolvers")
    assert offenders(below, "palimpsest.jobs") == []


def house_tool() -> Any:
    spec = importlib.util.spec_from_file_location("house", SRC.parents[1] / "tools" / "house.py")
    assert spec is not None
    assert spec.loader is not None
    house = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(house)
    return house


def test_no_import_circle() -> None:
    """Over every import, in functions and under ``TYPE_CHECKING`` too (``tools/house.py``)."""
    house = house_tool()
    sources = {house.module_name(p, SRC.parent): p for p in SRC.rglob("*.py")}
    graph = {n: house.imported(p, n, set(sources)) for n, p in sources.items()}
    assert house.circles(graph) == []


def test_the_circle_check_sees_a_type_checking_import(tmp_path: Path) -> None:
    package = tmp_path / "palimpsest"
    package.mkdir()
    (package / "a.py").write_text("from palimpsest import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from palimpsest.a import x\n"
    )
    house = house_tool()
    sources = {house.module_name(p, tmp_path): p for p in package.glob("*.py")}
    graph = {n: house.imported(p, n, set(sources)) for n, p in sources.items()}
    assert house.circles(graph) == [["palimpsest.a", "palimpsest.b"]]


def test_no_import_runs_upward() -> None:
    """A module imports its own layer and those below (``LAYERS`` in ``tools/house.py``):
    the middleware not the GraphQL view, the runtime and SQL Memory not the managed servers."""
    house = house_tool()
    sources = {house.module_name(p, SRC.parent): p for p in SRC.rglob("*.py")}
    known = set(sources)
    upward = [
        f"{a} -> {b}"
        for a, path in sorted(sources.items())
        for b in sorted(house.imported(path, a, known))
        if (la := house.layer(a)) is not None and (lb := house.layer(b)) is not None and lb > la
    ]
    assert upward == []
