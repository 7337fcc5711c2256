"""What the model answered, checked: candidate facts become drafts or are dropped, by reason.

Nothing the model says is trusted. A candidate is dropped (and counted under its reason) when:

- ``malformed``: it is not an object of the schema's shape;
- ``quote_not_in_turns``: its quote is not, character for character, in one of the turns;
- ``unknown_type``: a confirmed ontology is in force and does not declare its subject's or
  object's type (the speaker's ``person`` type is always known);
- ``unknown_predicate``: its predicate is not a short phrase of words (1-6 words, 80
  characters at most, no digits or punctuation but ``'`` and ``-``);
- ``malformed_date``: ``validAt``/``invalidAt`` is not a wire date, or the interval is empty;
- ``unplaceable_subject``: its subject is named neither in the turns, nor as a speaker, nor
  by an entity of the scope (so no fact about someone else's entity is ever written);
- ``invalid``: the fact write's own checks refuse it (blank or over-long names or text);
- ``over_cap``: past ``MAX_FACTS`` candidates in one answer.

A kept candidate becomes a ``FactDraft`` quoting its turn, as a ``provided`` fact does, and
stamped with who extracted it (``extracted_by``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.domain.names import normalise
from palimpsest.domain.time.timeparse import check_interval, parse_optional
from palimpsest.errors import InvalidArgument
from palimpsest.ontology import Ontology
from palimpsest.ontology.extractors import SPEAKER_TYPE, Turn, candidates
from palimpsest.resolvers.facts import VALUE_TYPE, prepare
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef

MAX_FACTS = 100  # candidates one answer may give; the rest are dropped (``over_cap``)
MAX_QUOTE = 800
MAX_PREDICATE = 80
MAX_PREDICATE_WORDS = 6
_WORD = re.compile(r"^[^\W\d_][\w'-]*$")
FIRST_PERSON = frozenset({"i", "me", "my", "myself", "mine"})

_NAMED = {
    "type": "object",
    "properties": {"type": {"type": "string"}, "name": {"type": "string"}},
    "required": ["type", "name"],
    "additionalProperties": False,
}
_NULLABLE_STRING = {"type": ["string", "null"]}

# The answer's JSON schema: strict (every property required, nothing else allowed), as
# Chat Completions' structured outputs require; the Messages API takes it as a tool's input.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "turn": {"type": "string"},
                    "quote": {"type": "string"},
                    "subject": _NAMED,
                    "predicate": {"type": "string"},
                    "object": {"anyOf": [_NAMED, {"type": "null"}]},
                    "value": _NULLABLE_STRING,
                    "validAt": _NULLABLE_STRING,
                    "invalidAt": _NULLABLE_STRING,
                },
                "required": [
                    "turn",
                    "quote",
                    "subject",
                    "predicate",
                    "object",
                    "value",
                    "validAt",
                    "invalidAt",
                ],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class Checked:
    facts: list[tuple[str, FactDraft]]  # (turn id, draft)
    dropped: Counter[str]


class _Drop(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def turn_label(index: int) -> str:
    """The short id a turn has in the prompt (``t1``, ``t2``, ...)."""
    return f"t{index + 1}"


def check(
    payload: dict[str, Any],
    turns: Sequence[Turn],
    ontology: Ontology | None,
    known_names: Collection[str],
    extracted_by: str,
) -> Checked:
    """The candidates of ``payload`` that pass every check, as drafts; the rest counted."""
    dropped: Counter[str] = Counter()
    items = payload.get("facts")
    if not isinstance(items, list):
        dropped["malformed"] += 1
        return Checked([], dropped)
    labels = {turn_label(i): t for i, t in enumerate(turns)}
    named = _named_in(turns) | set(known_names)
    kept: list[tuple[str, FactDraft]] = []
    for n, item in enumerate(items):
        if n >= MAX_FACTS:
            dropped["over_cap"] += len(items) - MAX_FACTS
            break
        try:
            kept.append(_one(item, labels, turns, ontology, named, extracted_by))
        except _Drop as d:
            dropped[d.reason] += 1
    return Checked(kept, dropped)


def _named_in(turns: Sequence[Turn]) -> set[str]:
    out: set[str] = set()
    for t in turns:
        out |= set(candidates(t.text[t.quote_start :]))
        if t.speaker and normalise(t.speaker):
            out.add(normalise(t.speaker))
    return out


def _one(
    item: Any,
    labels: dict[str, Turn],
    turns: Sequence[Turn],
    ontology: Ontology | None,
    named: set[str],
    extracted_by: str,
) -> tuple[str, FactDraft]:
    if not isinstance(item, dict):
        raise _Drop("malformed")
    quote = _string(item.get("quote"))
    predicate = _string(item.get("predicate"))
    subject = _entity(item.get("subject"))
    obj = None if item.get("object") is None else _entity(item.get("object"))
    value = item.get("value")
    if value is not None and not isinstance(value, str):
        raise _Drop("malformed")
    if (obj is None) == (value is None or not value.strip()):
        raise _Drop("malformed")  # exactly one of object and value
    turn = _quoted_turn(quote, labels.get(str(item.get("turn"))), turns)
    subject = _speaker_for_self(subject, turn)
    subject = EntityRef(_known_type(subject.type, ontology), subject.name)
    if obj is not None:
        obj = EntityRef(_known_type(obj.type, ontology), obj.name)
    predicate = _predicate(predicate)
    valid_at, invalid_at = _dates(item.get("validAt"), item.get("invalidAt"))
    if normalise(subject.name) not in named:
        raise _Drop("unplaceable_subject")
    said = obj.name if obj is not None else (value or "")
    draft = FactDraft(
        subject=subject,
        predicate=predicate,
        object=obj,
        object_value=None if obj is not None else value,
        text=f"{subject.name} {predicate} {said}",
        observed_at=turn.observed_at,
        valid_at=valid_at,
        invalid_at=invalid_at,
        source=SourceRef(turn.id, turn.quote_start, len(turn.text)),
        quote=quote,
        extracted_by=extracted_by,
    )
    try:
        prepare([draft])  # the write's own checks, so one bad candidate never fails a batch
    except InvalidArgument:
        raise _Drop("invalid") from None
    return turn.id, draft


def _string(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Drop("malformed")
    return value


def _entity(value: Any) -> EntityRef:
    if not isinstance(value, dict):
        raise _Drop("malformed")
    return EntityRef(_string(value.get("type")), _string(value.get("name")))


def _quoted_turn(quote: str, named: Turn | None, turns: Sequence[Turn]) -> Turn:
    """The turn whose span holds ``quote``: the one the candidate names, else the only one."""
    if len(quote) > MAX_QUOTE:
        raise _Drop("quote_not_in_turns")
    if named is not None and quote in named.text[named.quote_start :]:
        return named
    holding = [t for t in turns if quote in t.text[t.quote_start :]]
    if len(holding) != 1:
        raise _Drop("quote_not_in_turns")
    return holding[0]


def _speaker_for_self(subject: EntityRef, turn: Turn) -> EntityRef:
    if normalise(subject.name) in FIRST_PERSON and turn.speaker:
        return EntityRef(SPEAKER_TYPE, turn.speaker)
    return subject


def _known_type(name: str, ontology: Ontology | None) -> str:
    key = normalise(name)
    if key == SPEAKER_TYPE or ontology is None or not ontology.confirmed:
        return key
    if key == VALUE_TYPE:
        raise _Drop("unknown_type")  # the literal's type is the server's, never an entity's
    found = ontology.find(key)
    if found is None:
        raise _Drop("unknown_type")
    return found.name


def _predicate(value: str) -> str:
    text = " ".join(value.lower().split())
    words = text.split(" ")
    if (
        len(text) > MAX_PREDICATE
        or len(words) > MAX_PREDICATE_WORDS
        or not all(_WORD.match(w) for w in words)
    ):
        raise _Drop("unknown_predicate")
    return text


def _dates(valid: Any, invalid: Any) -> tuple[datetime | None, datetime | None]:
    for v in (valid, invalid):
        if v is not None and not isinstance(v, str):
            raise _Drop("malformed_date")
    try:
        valid_at = parse_optional(valid, "validAt")
        invalid_at = parse_optional(invalid, "invalidAt")
        check_interval(valid_at, invalid_at)
    except InvalidArgument:
        raise _Drop("malformed_date") from None
    return valid_at, invalid_at
