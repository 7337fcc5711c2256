"""The checks every candidate fact passes before it may be written: nothing the model says
is trusted, and each dropped candidate is counted under its reason."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from palimpsest.extraction.candidates import MAX_FACTS, check
from palimpsest.ontology import parse_ontology
from palimpsest.ontology.extractors import Turn
from palimpsest.schema.drafts import EntityRef, SourceRef
from tests.model_host import candidate

STAMP = "model:extract_v1:local-model"
SAID = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
TEXT = "I moved to Berlin last month and I work at Siemens now."
ONTOLOGY = parse_ontology(
    """status: confirmed

## person
scope: user
single: lives in, works at

## city
aliases: town

## organization
aliases: company
"""
)


def turn(text: str = TEXT, speaker: str = "Alice", id: str = "a" * 32) -> Turn:
    return Turn(id, f"{speaker}: {text}", len(speaker) + 2, speaker, "user", SAID, "chat-1")


def checked(*facts: dict[str, Any], ontology: Any = ONTOLOGY, known: set[str] | None = None) -> Any:
    return check({"facts": list(facts)}, [turn()], ontology, known or set(), STAMP)


MOVED = candidate("t1", "I moved to Berlin", ("person", "I"), "lives in", ("city", "Berlin"))


def test_a_good_candidate_becomes_a_draft_quoting_its_turn_as_the_speaker() -> None:
    found = checked({**MOVED, "validAt": "2026-11"})
    assert not found.dropped
    [(turn_id, draft)] = found.facts
    assert turn_id == "a" * 32
    assert draft.subject == EntityRef("person", "Alice")  # "I" is the speaker
    assert draft.predicate == "lives in"
    assert draft.object == EntityRef("city", "Berlin")
    assert draft.valid_at == datetime(2026, 11, 1, tzinfo=UTC)
    assert draft.observed_at == SAID
    assert draft.source == SourceRef("a" * 32, 7, len("Alice: ") + len(TEXT))
    assert draft.quote == "I moved to Berlin"
    assert draft.extracted_by == STAMP


def test_types_are_read_through_the_ontologys_aliases() -> None:
    c = candidate("t1", "work at Siemens", ("person", "Alice"), "works at", ("company", "Siemens"))
    [(_, draft)] = checked(c).facts
    assert draft.object == EntityRef("organization", "Siemens")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"quote": "I moved to Paris"}, "quote_not_in_turns"),
        ({"quote": "Alice: I moved"}, "quote_not_in_turns"),  # the speaker prefix is not said
        ({"object": {"type": "planet", "name": "Berlin"}}, "unknown_type"),
        ({"subject": {"type": "robot", "name": "I"}}, "person"),  # "I" is the speaker: kept
        ({"subject": {"type": "robot", "name": "Alice"}}, "unknown_type"),
        ({"predicate": "lives in; DROP"}, "unknown_predicate"),
        ({"predicate": "was born in 1990"}, "unknown_predicate"),
        ({"predicate": "a b c d e f g"}, "unknown_predicate"),
        ({"validAt": "last month"}, "malformed_date"),
        ({"validAt": "2026-13"}, "malformed_date"),
        ({"validAt": "2026-11", "invalidAt": "2026-10"}, "malformed_date"),
        ({"validAt": 2026}, "malformed_date"),
        ({"subject": {"type": "person", "name": "Mallory"}}, "unplaceable_subject"),
        ({"subject": "Alice"}, "malformed"),
        ({"object": None}, "malformed"),  # neither object nor value
        ({"value": "Berlin"}, "malformed"),  # both
        ({"quote": ""}, "malformed"),
        ({"subject": {"type": "person", "name": "Berlin" * 60}}, "unplaceable_subject"),
    ],
)
def test_a_bad_candidate_is_dropped_and_counted(change: dict[str, Any], reason: str) -> None:
    found = checked({**MOVED, **change})
    if reason == "person":
        assert [d.subject for _, d in found.facts] == [EntityRef("person", "Alice")]
        return
    assert found.facts == []
    assert dict(found.dropped) == {reason: 1}


def test_a_subject_of_the_scope_not_named_in_the_turns_is_placeable() -> None:
    c = candidate(
        "t1", "I work at Siemens", ("person", "Alice Smith"), "works at", ("company", "x")
    )
    assert checked(c).dropped == {"unplaceable_subject": 1}
    assert len(checked(c, known={"alice smith"}).facts) == 1


def test_without_a_confirmed_ontology_any_type_is_taken_as_written() -> None:
    c = {**MOVED, "object": {"type": "Planet", "name": "Berlin"}}
    [(_, draft)] = checked(c, ontology=None).facts
    assert draft.object == EntityRef("planet", "Berlin")


def test_a_wrong_turn_label_is_mended_by_the_only_turn_holding_the_quote() -> None:
    assert len(checked({**MOVED, "turn": "t9"}).facts) == 1


def test_a_value_object_and_a_literal_type_from_the_model() -> None:
    c = candidate("t1", "work at Siemens now", ("person", "I"), "works at", value="Siemens")
    [(_, draft)] = checked(c).facts
    assert (draft.object, draft.object_value) == (None, "Siemens")
    dropped = checked({**c, "value": None, "object": {"type": "value", "name": "x"}}).dropped
    assert dropped == {"unknown_type": 1}


def test_an_answer_without_a_list_and_past_the_cap() -> None:
    assert check({"facts": "none"}, [turn()], None, set(), STAMP).dropped == {"malformed": 1}
    many = check({"facts": [MOVED] * (MAX_FACTS + 5)}, [turn()], None, set(), STAMP)
    assert len(many.facts) == MAX_FACTS
    assert many.dropped == {"over_cap": 5}
