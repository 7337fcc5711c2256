"""The ADK memory service's spans: an event without an id keys by its invocation and time."""

from __future__ import annotations

from google.adk.events.event import Event
from google.genai import types

from palimpsest.integrations.adk import event_span


def said(text: str, *, id: str = "", invocation: str = "inv-1", at: float = 1.0) -> Event:
    content = types.Content(role="user", parts=[types.Part(text=text)])
    event = Event(author="user", content=content, invocation_id=invocation, timestamp=at)
    event.id = id  # ADK gives every new event an id: an event rebuilt without one has none
    return event


def key(event: Event) -> str | None:
    span = event_span(event, "session-1")
    assert span is not None
    return span.source_id


def test_an_event_with_an_id_keys_by_it() -> None:
    assert key(said("Yes.", id="e-7")) == "e-7"


def test_a_later_yes_without_an_id_is_a_turn_of_its_own() -> None:
    first = said("Yes.", invocation="inv-1", at=1.0)
    later = said("Yes.", invocation="inv-2", at=9.0)
    same_invocation_later = said("Yes.", invocation="inv-1", at=5.0)
    assert len({key(first), key(later), key(same_invocation_later)}) == 3


def test_the_same_event_added_again_keeps_its_key() -> None:
    assert key(said("Yes.", at=3.25)) == key(said("Yes.", at=3.25))
