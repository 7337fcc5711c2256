"""The export reads every label a person's scope holds but the derived ones."""

from __future__ import annotations

from palimpsest.resolvers.erasure.erase import PERSON_LABELS
from palimpsest.resolvers.portability.export import READERS
from palimpsest.resolvers.portability.importer import KINDS

# Recomputed on import (term statistics, chunks' passages) or the scope's own bookkeeping
# (counters, quotas).
DERIVED = {"TermStats", "Scope", "Passage"}


def test_every_label_of_a_person_is_exported() -> None:
    texts = [statement.text for statement, _ in READERS]
    for label, _, _ in PERSON_LABELS:
        if label in DERIVED:
            continue
        pattern = f"[f:{label} " if label == "FACT" else f":{label} {{scope_key: $scope_key"
        assert any(pattern in text for text in texts), label


def test_every_exported_kind_is_imported() -> None:
    row = dict.fromkeys(("parent_id", "next_id", "subject_id", "object_id"))
    row |= {"props": [], "mentions": [], "version_mentions": [], "sources": []}
    assert {shape(row)["kind"] for _, shape in READERS} <= KINDS
