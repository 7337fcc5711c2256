"""Palimpsest: a long-term memory server for AI agents."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

__version__ = "0.1.0"

# Deprecated import paths (0.1.0 grouped the loose modules by role, and resolvers/ into one
# package per plane; CHANGELOG.md names each move), kept for one release. An old name imports
# as the SAME module object as its new one, so code that imports or monkeypatches the old path
# keeps working; ``<old>.pyi`` beside it tells type checkers the same. Nothing in this
# repository imports an old path. The five resolver modules named like their plane (recall,
# facts, entities, documents, erasure) are not here: those names are the planes' packages now,
# whose faces export what the doors call.
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
    "palimpsest.recall_timing": "palimpsest.resolvers.recall.timing",
    "palimpsest.resolvers.recall_asks": "palimpsest.resolvers.recall.asks",
    "palimpsest.resolvers.recall_controls": "palimpsest.resolvers.recall.controls",
    "palimpsest.resolvers.recall_dedup": "palimpsest.resolvers.recall.dedup",
    "palimpsest.resolvers.recall_entities": "palimpsest.resolvers.recall.entities",
    "palimpsest.resolvers.recall_forms": "palimpsest.resolvers.recall.forms",
    "palimpsest.resolvers.recall_fusion": "palimpsest.resolvers.recall.fusion",
    "palimpsest.resolvers.recall_hits": "palimpsest.resolvers.recall.hits",
    "palimpsest.resolvers.recall_legs": "palimpsest.resolvers.recall.legs",
    "palimpsest.resolvers.recall_past": "palimpsest.resolvers.recall.past",
    "palimpsest.resolvers.recall_sessions": "palimpsest.resolvers.recall.sessions",
    "palimpsest.resolvers.recall_text": "palimpsest.resolvers.recall.text",
    "palimpsest.resolvers.recall_time": "palimpsest.resolvers.recall.time_boosts",
    "palimpsest.resolvers.recall_timing": "palimpsest.resolvers.recall.timing",
    "palimpsest.resolvers.context": "palimpsest.resolvers.recall.context_block",
    "palimpsest.resolvers.closure": "palimpsest.resolvers.facts.closure",
    "palimpsest.resolvers.dedup": "palimpsest.resolvers.facts.dedup",
    "palimpsest.resolvers.fact_decode": "palimpsest.resolvers.facts.decode",
    "palimpsest.resolvers.fact_input": "palimpsest.resolvers.facts.inputs",
    "palimpsest.resolvers.quotes": "palimpsest.resolvers.facts.quotes",
    "palimpsest.resolvers.entity_merge": "palimpsest.resolvers.entities.merging",
    "palimpsest.resolvers.graph": "palimpsest.resolvers.entities.graph",
    "palimpsest.resolvers.document_import": "palimpsest.resolvers.documents.importing",
    "palimpsest.resolvers.document_revisions": "palimpsest.resolvers.documents.revisions",
    "palimpsest.resolvers.revision_mentions": "palimpsest.resolvers.documents.mentions",
    "palimpsest.resolvers.revision_write": "palimpsest.resolvers.documents.revision_write",
    "palimpsest.resolvers.sources": "palimpsest.resolvers.documents.sources",
    "palimpsest.resolvers.memory_files": "palimpsest.resolvers.documents.memory_files",
    "palimpsest.resolvers.memory": "palimpsest.resolvers.notes.keyvalue",
    "palimpsest.resolvers.note_versions": "palimpsest.resolvers.notes.versions",
    "palimpsest.resolvers.store": "palimpsest.resolvers.notes.namespaced",
    "palimpsest.resolvers.harvest": "palimpsest.resolvers.cycle.harvesting",
    "palimpsest.resolvers.consolidate": "palimpsest.resolvers.cycle.consolidate",
    "palimpsest.resolvers.queue": "palimpsest.resolvers.cycle.queue",
    "palimpsest.resolvers.pending": "palimpsest.resolvers.cycle.pending",
    "palimpsest.resolvers.turn_rows": "palimpsest.resolvers.cycle.turn_rows",
    "palimpsest.resolvers.sweep": "palimpsest.resolvers.cycle.sweep",
    "palimpsest.resolvers.quotas": "palimpsest.resolvers.tenant.quotas",
    "palimpsest.resolvers.usage": "palimpsest.resolvers.tenant.plane_usage",
    "palimpsest.resolvers.ontology": "palimpsest.resolvers.tenant.ontology",
    "palimpsest.resolvers.retention": "palimpsest.resolvers.tenant.retention",
    "palimpsest.resolvers.erasure_audit": "palimpsest.resolvers.erasure.audit",
    "palimpsest.resolvers.erasure_authored": "palimpsest.resolvers.erasure.authored",
    "palimpsest.resolvers.erasure_jobs": "palimpsest.resolvers.erasure.jobs",
    "palimpsest.resolvers.export": "palimpsest.resolvers.portability.export",
    "palimpsest.resolvers.importer": "palimpsest.resolvers.portability.importer",
    "palimpsest.resolvers.import_check": "palimpsest.resolvers.portability.checks",
    "palimpsest.cypher.executor": "palimpsest.cypher.driver.executor",
    "palimpsest.cypher.connect": "palimpsest.cypher.driver.connect",
    "palimpsest.cypher.driver_errors": "palimpsest.cypher.driver.errors",
    "palimpsest.cypher.records": "palimpsest.cypher.driver.records",
    "palimpsest.cypher.causal": "palimpsest.cypher.driver.causal",
    "palimpsest.cypher.quiet_params": "palimpsest.cypher.driver.quiet_params",
    "palimpsest.cypher.temporal_wire": "palimpsest.cypher.driver.temporal_wire",
    "palimpsest.cypher.cosine": "palimpsest.cypher.driver.cosine",
    # Issue 44, step 4: schema/ holds types only; applying the constraints and indexes is I/O.
    "palimpsest.schema.indexes": "palimpsest.cypher.indexes",
}


class MovedPaths:
    """Answers an old name of ``moved`` with its new module: the same module object. A finder
    and loader by protocol, not by ``importlib.abc``'s classes: importing those (tempfile,
    shutil, importlib.resources) would cost every ``palimpsest`` command's start-up. ``owner``
    names the package whose map it serves, so a reload installs it once."""

    def __init__(self, owner: str, moved: Mapping[str, str]) -> None:
        self.owner = owner
        self.moved = moved
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.moved[spec.name])
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import machinery sets the old name's spec on the module: give it back its own.
        module.__spec__ = self._specs[module.__name__]

    def install(self, *, first: bool) -> None:
        """On ``sys.meta_path`` once per owner: first (ahead of an editable install's finder
        that may map the old name to another checkout's file) or after every other finder."""
        if any(getattr(f, "owner", None) == self.owner for f in sys.meta_path):  # reloads
            return
        if first:
            sys.meta_path.insert(0, self)
        else:
            sys.meta_path.append(self)


MovedPaths("palimpsest", MOVED).install(first=False)
