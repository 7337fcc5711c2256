"""Loads LangGraph's own store tests (../shared/conformance/langgraph, unmodified) and hands
their test functions to the two harness modules, which supply the fixtures they use from
``PalimpsestStore`` and ``AsyncPalimpsestStore`` at test time.

Deselected (not collected), each with its reason: ``DESELECTED`` below.
"""

from __future__ import annotations

import importlib.util
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "langgraph"

_SQLITE = "tests SQLite internals (migrations, GLOB/regex escaping, the SQL it builds)"
_EMBED = "tests the client-side embedding function (its index config, dims, vectors, scores)"
_VECTOR_TESTS = [
    "test_vector_store_initialization",
    "test_vector_insert_with_auto_embedding",
    "test_vector_update_with_embedding",
    "test_vector_search_with_filters",
    "test_vector_search_pagination",
    "test_vector_search_edge_cases",
    "test_embed_with_path",
]
DESELECTED: dict[str, dict[str, str]] = {
    "test_store": {
        "TestSqliteStore": "a class over SqliteStore's own connection and tables; " + _SQLITE,
        "test_nonnull_migrations": _SQLITE,
        "test_escape_glob_literal": _SQLITE,
        "test_namespace_match_pattern": _SQLITE,
        "test_list_namespaces_prefix_uses_indexable_condition": _SQLITE,
        **dict.fromkeys(_VECTOR_TESTS, _EMBED),
        "test_embed_with_path_operation_config": _EMBED,
        "test_scores": _EMBED,
    },
    "test_async_store": dict.fromkeys(_VECTOR_TESTS, _EMBED),
}


def load(name: str) -> ModuleType:
    """The conformance module ``name``, importable as ``tests.<name>`` (the async file imports
    ``CharacterEmbeddings`` from ``tests.test_store``)."""
    qualified = f"tests.{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    path = CONFORMANCE / f"{name}.py"
    if not path.is_file():
        raise RuntimeError(f"LangGraph's conformance tests are missing: {path}")
    spec = importlib.util.spec_from_file_location(qualified, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module


def tests_of(module: ModuleType, name: str) -> dict[str, Callable[..., Any]]:
    """The module's test functions, less the deselected ones."""
    skipped = DESELECTED[name]
    missing = sorted(set(skipped) - set(vars(module)))
    if missing:  # a renamed upstream test must not widen the deselection unnoticed
        raise RuntimeError(f"deselected tests not in {name}: {missing}")
    return {
        attr: fn
        for attr, fn in vars(module).items()
        if attr.startswith("test_") and callable(fn) and attr not in skipped
    }


def fresh_user() -> str:
    """A user of its own per store, so each test starts from an empty USER scope."""
    return f"lg-{uuid.uuid4().hex[:12]}"


def index_for(text_fields: list[str] | None) -> dict[str, list[str]]:
    """The conformance's ``text_fields`` as the server-side index (default: the whole value)."""
    return {"fields": text_fields or ["$"]}
