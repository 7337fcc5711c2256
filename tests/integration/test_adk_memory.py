"""The Google ADK memory service on the real server: a session built by ADK's own session
service is banked through harvest, consolidated, and found by ``search_memory`` as ADK's
``SearchMemoryResponse``."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from google.adk.events.event import Event
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.session import Session
from google.genai import types

from palimpsest.client import AsyncClient, Scope
from palimpsest.errors import Forbidden, Unavailable
from palimpsest.integrations.adk import PalimpsestMemoryService
from palimpsest.resolvers.services import Services
from tests.integration.runtimes import ONE_TRY, Run, consolidated, new_run, unreachable_url


def said(author: str, role: str, *parts: types.Part) -> Event:
    return Event(
        author=author, invocation_id="inv-1", content=types.Content(role=role, parts=list(parts))
    )


async def session_of(run: Run) -> Session:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="trips", user_id=run.user)
    for event in (
        said("user", "user", types.Part(text="I am allergic to hazelnuts, book no dessert.")),
        said(
            "planner",
            "model",
            types.Part(text="thinking it over", thought=True),
            types.Part(text="Noted: no hazelnut desserts on the Lisbon trip."),
        ),
        said("planner", "model", types.Part.from_function_call(name="book", args={"seats": 2})),
        said("user", "user", types.Part.from_function_response(name="book", response={"ok": 1})),
        said("planner", "model"),  # no parts: nothing to remember
    ):
        await sessions.append_event(session, event)
    return session


async def test_a_session_is_banked_and_searched(
    live_server_url: str, token: Callable[..., str], svc: Services
) -> None:
    run = new_run(token)
    session = await session_of(run)
    async with run.aclient(live_server_url) as client:
        memory = PalimpsestMemoryService(client)
        await memory.add_session_to_memory(session)
        assert (memory.last.accepted, memory.last.duplicates) == (4, 0)
        # ADK adds a session many times during its life: each event is banked once.
        await memory.add_session_to_memory(session)
        assert (memory.last.accepted, memory.last.duplicates) == (0, 4)
        assert await consolidated(svc, run) == 4
        found = await memory.search_memory(
            app_name="trips", user_id=run.user, query="what is the user allergic to"
        )
        assert isinstance(found, SearchMemoryResponse)
        assert found.memories
        assert all(isinstance(m, MemoryEntry) for m in found.memories)
        texts = [m.content.parts[0].text for m in found.memories if m.content.parts]
        assert "user: I am allergic to hazelnuts, book no dessert." in texts
        best = next(
            m
            for m in found.memories
            if m.content.parts and "hazelnuts, book" in str(m.content.parts[0].text)
        )
        assert best.id is not None
        assert best.timestamp is not None
        assert best.custom_metadata["kind"] == "DOCUMENTS"
        assert best.author == "planner"  # the harvesting run's agent
        everything = "\n".join(str(t) for t in texts)
        assert "thinking it over" not in everything  # reasoning is not banked
        hits = await client.search(Scope.USER, "book seats", top_k=10)
        assert any('[tool call book] {"seats": 2}' in h.text for h in hits.hits)


async def test_another_user_is_refused_before_anything_is_sent(
    live_server_url: str, token: Callable[..., str], svc: Services
) -> None:
    run = new_run(token)
    session = await session_of(run)
    other = session.model_copy(update={"user_id": "bob"})
    async with run.aclient(live_server_url) as client:
        memory = PalimpsestMemoryService(client)
        with pytest.raises(Forbidden, match="another user"):
            await memory.add_session_to_memory(other)
        with pytest.raises(Forbidden, match="another user"):
            await memory.search_memory(app_name="trips", user_id="bob", query="hazelnuts")
    assert await consolidated(svc, run) == 0  # nothing was banked


async def test_an_unreachable_server_fails_the_call(token: Callable[..., str]) -> None:
    run = new_run(token)
    session = await session_of(run)
    async with AsyncClient(url=unreachable_url(), token=run.token, retry=ONE_TRY) as client:
        memory = PalimpsestMemoryService(client)
        with pytest.raises(Unavailable, match="cannot reach the Palimpsest server"):
            await memory.add_session_to_memory(session)
        with pytest.raises(Unavailable):
            await memory.search_memory(app_name="trips", user_id=run.user, query="x")
