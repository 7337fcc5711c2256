"""Entity types become a second label only through an allow-list pattern."""

from __future__ import annotations

import pytest

from palimpsest.resolvers.facts.inputs import TYPE_LABEL, type_label


@pytest.mark.parametrize(
    ("entity_type", "label"),
    [
        ("person", "Type_Person"),
        ("internal-service", "Type_InternalService"),
        ("city", "Type_City"),
        ("value", "Type_Value"),
        ("Memory", "Type_Memory"),  # never the structural label itself
        ("v2 api", "Type_V2Api"),
        ("人物", "Type_Other"),
        ("x`) MATCH (n) DETACH DELETE n //", "Type_XMATCHNDETACHDELETEN"),
    ],
)
def test_labels_follow_the_pattern(entity_type: str, label: str) -> None:
    assert type_label(entity_type) == label
    assert TYPE_LABEL.match(label)


def test_long_types_are_cut_to_the_pattern() -> None:
    label = type_label("word " * 100)
    assert TYPE_LABEL.match(label)
    assert len(label) == len("Type_") + 64
