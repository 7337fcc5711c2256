"""Palimpsest: a long-term memory server for AI agents."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

__version__ = "0.1.0"

# Deprecated import paths (0.1.0 grouped the loose modules by role; CHANGELOG.md names each
# move), kept for one release. An old name imports as the SAME module object as its new one,
# so code that imports or monkeypatches the old path keeps working; ``<old>.pyi`` beside it
# tells type checkers the same. Nothing in this repository imports an old path.
MOVED: dict[str, str] = {
    "palimpsest.schema.names": "palimpsest.domain.names",
    "palimpsest.timeparse": "palimpsest.domain.time.timeparse",
    "palimpsest.timerefs": "palimpsest.domain.time.timerefs",
    "palimpsest.dateranges": "palimpsest.domain.time.dateranges",
    "palimpsest.recall": "palimpsest.domain.ranking.fusion",
    "palimpsest.fulltext": "palimpsest.domain.ranking.fulltext",
    "palimpsest.cues": "palimpsest.domain.ranking.cues",
    "palimpsest.dedup": "palimpsest.domain.ranking.dedup",
    "palimpsest.packing": "palimpsest.domain.ranking.packing",
    "palimpsest.markdown": "palimpsest.domain.documents.markdown",
    "palimpsest.revisions": "palimpsest.domain.documents.revisions",
    "palimpsest.mention_places": "palimpsest.domain.documents.mention_places",
    "palimpsest.conversation": "palimpsest.domain.documents.conversation",
    "palimpsest.values": "palimpsest.domain.notes.values",
    "palimpsest.namespaces": "palimpsest.domain.notes.namespaces",
    "palimpsest.memory_paths": "palimpsest.domain.notes.memory_paths",
    "palimpsest.placement": "palimpsest.ontology.placement",
    "palimpsest.predicates": "palimpsest.ontology.predicates",
    "palimpsest.reconcile": "palimpsest.ontology.reconcile",
    "palimpsest.extractors": "palimpsest.ontology.extractors",
    "palimpsest.embedding_models": "palimpsest.embedding.models",
    "palimpsest.consolidator": "palimpsest.jobs.consolidator",
    "palimpsest.sweeper": "palimpsest.jobs.sweeper",
    "palimpsest.reembedder": "palimpsest.jobs.reembedder",
    "palimpsest.ingest": "palimpsest.jobs.ingest",
    "palimpsest.portability": "palimpsest.jobs.portability",
    "palimpsest.queue_metrics": "palimpsest.jobs.queue_metrics",
    "palimpsest.ports": "palimpsest.local.ports",
    "palimpsest.recall_timing": "palimpsest.resolvers.recall_timing",
    # Issue 44, step 4: schema/ holds types only; applying the constraints and indexes is I/O.
    "palimpsest.schema.indexes": "palimpsest.cypher.indexes",
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old name of ``MOVED`` with its new module (after every other finder)."""

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


if not any(type(f).__qualname__ == _Moved.__qualname__ for f in sys.meta_path):  # reloads
    sys.meta_path.append(_Moved())
