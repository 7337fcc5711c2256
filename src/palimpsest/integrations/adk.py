"""A Google ADK ``BaseMemoryService`` over Palimpsest: sessions banked through ``harvest``,
memory searched with ``search``.

``PalimpsestMemoryService(client)`` goes where ADK takes a memory service
(``Runner(memory_service=...)``). ``add_session_to_memory`` (and ``add_events_to_memory`` for
a delta) sends each event with content as one span, keyed by the event's id, so a session
added many times during its life banks each event once; the consolidator turns the spans
into the user's recallable memory. ``search_memory`` runs the server's hybrid ``search`` in
the USER scope and answers ADK's ``SearchMemoryResponse`` of ``MemoryEntry`` items, each
citing its row's id.

The token decides whose memory this is: a call naming another ``user_id`` than the token's
user is refused with ``Forbidden`` before anything is sent, and ``app_name`` is not a scope
(one token, one user's memory). A server that cannot be reached fails the call with the
client's error (``Unavailable``, after its retries); nothing is queued locally, so the
caller of ``add_session_to_memory`` knows the session was not banked and can add it again.
Needs the client distribution's extra ``adk`` (``pip install './client[adk]'``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from palimpsest.client import AsyncClient, Scope, SpanInput
from palimpsest.client.recall_results import RecallHit
from palimpsest.errors import Forbidden
from palimpsest.integrations.banking import Banked, abank, message_key


def event_text(event: Event) -> str:
    """An event's content as text: its text parts, tool calls and tool results."""
    if event.content is None or not event.content.parts:
        return ""
    out = []
    for part in event.content.parts:
        if part.text and not part.thought:
            out.append(part.text)
        elif part.function_call is not None:
            call = part.function_call
            out.append(f"[tool call {call.name}] {json.dumps(call.args, default=str)}")
        elif part.function_response is not None:
            answer = part.function_response
            out.append(f"[tool result {answer.name}] {json.dumps(answer.response, default=str)}")
    return "\n".join(out)


def event_span(event: Event, session_id: str) -> SpanInput | None:
    """The span of one event, or None for an event with nothing to remember."""
    text = event_text(event)
    if event.partial or not text.strip():
        return None
    role = event.content.role if event.content is not None else None
    role = "assistant" if role == "model" else (role or "user")
    return SpanInput(
        text=text,
        speaker=event.author or role,
        role=role,
        observed_at=datetime.fromtimestamp(event.timestamp, UTC),
        source_id=event.id or fallback_key(event, session_id, role, text),
    )


def fallback_key(event: Event, session_id: str, role: str, text: str) -> str:
    """The key of an event without an id (ADK gives each new event one; an event rebuilt
    without it has none): its invocation and time as well as its text, so a later "Yes." in
    the same session is a turn of its own, not a duplicate of an earlier one, while the same
    event added again keeps its key."""
    return message_key(session_id, event.invocation_id or "", repr(event.timestamp), role, text)


class PalimpsestMemoryService(BaseMemoryService):
    """ADK memory in Palimpsest, for the user of the client's token."""

    def __init__(self, client: AsyncClient, *, top_k: int = 10) -> None:
        self.client = client
        self.top_k = top_k
        self.last = Banked()
        self._user: str | None = None

    async def add_session_to_memory(self, session: Session) -> None:
        await self._bank(session.user_id, session.events, session.id)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        await self._bank(user_id, events, session_id or "")

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        await self._check_user(user_id)
        result = await self.client.search(Scope.USER, query, top_k=self.top_k)
        return SearchMemoryResponse(memories=[memory_entry(h) for h in result.hits])

    async def _bank(self, user_id: str, events: Sequence[Event], session_id: str) -> None:
        await self._check_user(user_id)
        spans = [s for s in (event_span(e, session_id) for e in events) if s is not None]
        self.last = await abank(self.client, spans, 0)

    async def _check_user(self, user_id: str) -> None:
        if self._user is None:
            self._user = (await self.client.me()).user or ""
        if user_id != self._user:
            # The token's user is not named back: the caller may not be entitled to see it.
            raise Forbidden(
                "this memory service's token is for another user than the one ADK asked "
                "for: give each user a service with their own token"
            )


def memory_entry(hit: RecallHit) -> MemoryEntry:
    """One search hit as ADK's ``MemoryEntry``; its id is the note key or row id it cites."""
    provenance = hit.provenance
    return MemoryEntry(
        id=hit.key or hit.id,
        content=types.Content(role="user", parts=[types.Part(text=hit.text)]),
        author=provenance.agent if provenance is not None else None,
        timestamp=hit.observed_at.isoformat() if hit.observed_at is not None else None,
        custom_metadata={
            "kind": hit.kind.value,
            "scope": hit.scope.value,
            "score": hit.score,
            "document_id": hit.document_id,
        },
    )


__all__ = ["PalimpsestMemoryService", "event_span", "event_text", "memory_entry"]
