"""A person's erasure reaches every label a USER scope can hold."""

from __future__ import annotations

from palimpsest.cypher import erasure as q
from palimpsest.resolvers.erasure.erase import PERSON_LABELS
from tests.unit.cypher.test_statements import SCOPED

# Only the tenant scope holds these: the ontology, the erasure records and the erasure policy.
TENANT_ONLY = {"Ontology", "Erasure", "ErasurePolicy"}


def test_every_scoped_label_of_a_person_is_erased_and_checked() -> None:
    erased = {label for label, _, _ in PERSON_LABELS}
    assert erased == set(SCOPED) - TENANT_ONLY
    for label in erased:
        pattern = f"[f:{label} " if label == "FACT" else f":{label} {{scope_key: $scope_key}}"
        assert pattern in q.PERSON_LEFT.text, label


def test_each_label_has_its_own_bounded_statement() -> None:
    for label, statement, _ in PERSON_LABELS:
        assert f":{label}" in statement.text
        assert "$batch" in statement.text or label == "Scope"
