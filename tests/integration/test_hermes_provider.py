"""The Hermes Agent memory provider on the real server, driven by Hermes's own MemoryManager:
turns and compressed messages banked through harvest come back from ``search`` after
consolidation and from ``prefetch`` as the context block; an unreachable server leaves them in
the local spool, sent on the next call."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent.memory_manager import MemoryManager

from palimpsest.client import Client
from palimpsest.errors import Unavailable
from palimpsest.integrations.hermes import PalimpsestMemoryProvider
from palimpsest.resolvers.services import Services
from tests.integration.runtimes import (
    ONE_TRY,
    consolidated,
    new_run,
    turns_found,
    unreachable_url,
)

TURN = ("Remember that my sister Ines lives in Coimbra.", "I will remember Ines in Coimbra.")
EVICTED: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Hermes."},
    {"role": "user", "content": TURN[0]},
    {"role": "assistant", "content": TURN[1]},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "web", "arguments": '{"q": "tram 28"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Tram 28 runs from Martim Moniz."},
]


@pytest.fixture
def clients() -> Iterator[list[Client]]:
    """Clients the test opens, closed even when it fails (an open socket would warn later)."""
    opened: list[Client] = []
    yield opened
    for c in opened:
        c.close()


def manager_of(provider: PalimpsestMemoryProvider, home: Path) -> MemoryManager:
    manager = MemoryManager()
    manager.add_provider(provider)
    manager.initialize_all("hermes-session-1", platform="cli", hermes_home=str(home))
    return manager


async def test_turns_and_compressions_are_banked_and_recalled(
    live_server_url: str,
    token: Callable[..., str],
    svc: Services,
    tmp_path: Path,
    clients: list[Client],
) -> None:
    run = new_run(token, agent="hermes")
    clients.append(run.client(live_server_url))
    provider = PalimpsestMemoryProvider(clients[-1])
    manager = manager_of(provider, tmp_path)
    assert provider.spool is not None
    assert provider.spool.path == tmp_path / "palimpsest" / "spool.jsonl"
    manager.sync_all(*TURN, session_id="hermes-session-1")
    assert manager.flush_pending(timeout=60)
    assert (provider.last.accepted, provider.last.duplicates) == (2, 0)
    assert manager.on_pre_compress(EVICTED) == ""
    # The turn sync_turn banked is one span with the same message at compression.
    assert (provider.last.accepted, provider.last.duplicates) == (2, 2)
    assert provider.compressions == 1
    assert await consolidated(svc, run) == 4
    texts = [h.text for h in await turns_found(live_server_url, run, "where does Ines live")]
    assert "user: Remember that my sister Ines lives in Coimbra." in texts
    assert not any("You are Hermes" in t for t in texts)
    block = manager.prefetch_all("where does my sister Ines live")
    assert "Ines lives in Coimbra" in block
    assert "[" in block  # each line cites its row
    found = [h.text for h in await turns_found(live_server_url, run, "tram 28 Martim Moniz")]
    assert "tool: Tram 28 runs from Martim Moniz." in found
    manager.shutdown_all()
    assert provider.pending() == 0


async def test_the_same_words_later_in_the_run_are_a_span_of_their_own(
    live_server_url: str,
    token: Callable[..., str],
    svc: Services,
    tmp_path: Path,
    clients: list[Client],
) -> None:
    run = new_run(token, agent="hermes")
    clients.append(run.client(live_server_url))
    provider = PalimpsestMemoryProvider(clients[-1])
    manager = manager_of(provider, tmp_path)
    turns = [
        ("Shall I book the dentist for Tuesday?", "Yes."),
        ("And the car service on Friday?", "Yes."),
    ]
    banked = []
    for user, assistant in turns:
        manager.sync_all(user, assistant, session_id="hermes-session-1")
        assert manager.flush_pending(timeout=60)
        banked.append((provider.last.accepted, provider.last.duplicates))
    assert banked == [(2, 0), (2, 0)]
    history = [
        {"role": r, "content": t} for u, a in turns for r, t in (("user", u), ("assistant", a))
    ]
    manager.on_pre_compress(history)
    assert (provider.last.accepted, provider.last.duplicates) == (0, 4)
    assert await consolidated(svc, run) == 4
    manager.shutdown_all()


async def test_an_unreachable_server_spools_and_the_next_call_sends(
    live_server_url: str,
    token: Callable[..., str],
    svc: Services,
    tmp_path: Path,
    clients: list[Client],
) -> None:
    run = new_run(token, agent="hermes")
    clients.append(Client(url=unreachable_url(), token=run.token, retry=ONE_TRY))
    down = PalimpsestMemoryProvider(clients[-1])
    down.initialize("hermes-session-1", hermes_home=str(tmp_path), platform="cli")
    with pytest.raises(Unavailable, match=r"kept in .*spool\.jsonl"):
        down.sync_turn(*TURN)
    with pytest.raises(Unavailable, match="kept in"):
        down.on_pre_compress(EVICTED)
    assert down.pending() == 2 + 4
    assert await consolidated(svc, run) == 0
    # The server is back (the same run, a new process): the spool goes first.
    clients.append(run.client(live_server_url))
    up = PalimpsestMemoryProvider(clients[-1])
    up.initialize("hermes-session-1", hermes_home=str(tmp_path), platform="cli")
    up.sync_turn("What tram goes to the castle?", "Tram 28 does.")
    assert up.pending() == 0
    assert up.last.accepted == 2
    assert await consolidated(svc, run) == 2 + 2 + 2  # the turn, the new compression's 2, now
    texts = [h.text for h in await turns_found(live_server_url, run, "where does Ines live")]
    assert "user: Remember that my sister Ines lives in Coimbra." in texts
    up.shutdown()
