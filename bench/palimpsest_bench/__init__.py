"""Benchmarks and evaluation harnesses; run through `palimpsest bench` and `palimpsest eval`.

The suites the product's tests run too (attack, fuzz, faults, the crash suite, the API process
and wire client they share) are their own distribution, ``palimpsest-suites``, which the bench
depends on; their old paths here still import, as the same module objects, for one release.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

_MODULES = ("attack", "fuzz", "faults", "served", "wire")
_ATTACK = (
    "findings",
    "generate",
    "matrix",
    "plant",
    "probe_bookmarks",
    "probe_doors",
    "probe_erase",
    "probe_placement",
    "probe_sql",
    "probe_stalls",
    "probes",
    "run",
)
# Deprecated import paths (issue 44 moved the suites out of the bench), kept for one release.
MOVED: dict[str, str] = {
    **{f"palimpsest_bench.{m}": f"palimpsest_suites.{m}" for m in _MODULES},
    **{f"palimpsest_bench.attack.{m}": f"palimpsest_suites.attack.{m}" for m in _ATTACK},
}


class _MovedSuites(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old name of ``MOVED`` with its new module (as ``palimpsest.MOVED`` does), ahead
    of the other finders: an editable install's finder may still map the old name to a file of
    another checkout."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import machinery sets the old name's spec on the module: give it back its own.
        module.__spec__ = self._specs[module.__name__]


if not any(type(f).__qualname__ == _MovedSuites.__qualname__ for f in sys.meta_path):  # reloads
    sys.meta_path.insert(0, _MovedSuites())
