"""The Hermes memory provider (``integrations.hermes``) against a stub server: prefetch asks
``context`` for the user's message, each turn and compression banks its messages once, and
what the server does not take waits in the spool and goes first on the next call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from palimpsest.client import Client
from palimpsest.errors import Unavailable
from palimpsest.integrations.hermes import PalimpsestMemoryProvider, dialogue, message_span
from tests.unit.integrations.harvest_server import HarvestServer


def provider(server: HarvestServer, tmp_path: Path | None = None) -> PalimpsestMemoryProvider:
    made = PalimpsestMemoryProvider(
        Client("http://s", "tok", http=server.client_http()), budget_tokens=300
    )
    made.initialize("sess-1", **({"hermes_home": str(tmp_path)} if tmp_path else {}))
    return made


def test_dialogue_keeps_the_roles_that_are_dialogue_with_their_tool_calls() -> None:
    assert dialogue({"role": "system", "content": "You are..."}) is None
    assert dialogue({"role": "user", "content": "  "}) is None
    assert dialogue({"role": "user", "content": [{"type": "text", "text": "Hi"}]}) == ("user", "Hi")
    call = {"function": {"name": "search", "arguments": '{"q": 1}'}}
    assert dialogue({"role": "assistant", "content": None, "tool_calls": [call]}) == (
        "assistant",
        '[tool call search] {"q": 1}',
    )
    span = message_span(("user", "Hi"), "id-1")
    assert (span.text, span.speaker, span.role, span.source_id) == ("Hi", "user", "user", "id-1")


def test_prefetch_asks_context_with_the_budget_and_skips_a_blank_query() -> None:
    server = HarvestServer()
    hermes = provider(server)
    assert hermes.prefetch("where does Ada work?") == "[note:k] about where does Ada work?"
    assert hermes.prefetch("   ") == ""
    assert server.queries == [("where does Ada work?", 300)]
    assert hermes.name == "palimpsest"
    assert hermes.is_available()
    assert hermes.get_tool_schemas() == []
    assert json.loads(hermes.handle_tool_call("x", {})) == {"error": "palimpsest has no tool x"}


def test_a_turn_and_its_compression_bank_each_message_once() -> None:
    server = HarvestServer()
    hermes = provider(server)
    hermes.sync_turn("Ada joined Initech.", "Noted.")
    assert hermes.last.accepted == 2
    messages = [
        {"role": "system", "content": "prompt"},
        {"role": "user", "content": "Ada joined Initech."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Yes."},
    ]
    assert hermes.on_pre_compress(messages) == ""
    # The turn's two are duplicates; "Yes." was never synced: new, in generation 1.
    assert (hermes.last.accepted, hermes.last.duplicates) == (1, 2)
    (g0, turn), (g1, compressed) = server.calls
    assert (g0, g1) == (0, 1)
    assert [s["sourceId"] for s in turn] == [s["sourceId"] for s in compressed[:2]]
    assert [s["role"] for s in compressed] == ["user", "assistant", "user"]


def test_what_the_server_does_not_take_waits_in_the_spool(tmp_path: Path) -> None:
    server = HarvestServer(fail=1)
    hermes = provider(server, tmp_path)
    with pytest.raises(Unavailable, match="the spans are kept in") as caught:
        hermes.sync_turn("First.", "Ok.")
    assert caught.value.details["code"] == "FORBIDDEN"
    assert hermes.pending() == 2
    assert (tmp_path / "palimpsest" / "spool.jsonl").is_file()
    hermes.sync_turn("Second.", "Ok!")  # the spool goes first, then the new turn
    assert hermes.pending() == 0
    assert [[s["text"] for s in spans] for _, spans in server.calls] == [
        ["First.", "Ok."],
        ["Second.", "Ok!"],
    ]


def test_without_a_spool_the_failure_is_raised_as_it_is() -> None:
    server = HarvestServer(fail=1)
    hermes = provider(server)
    assert hermes.pending() == 0
    with pytest.raises(Exception, match="down") as caught:
        hermes.sync_turn("First.", "Ok.")
    assert not isinstance(caught.value, Unavailable)


def test_shutdown_sends_the_spool_and_closes_the_client(tmp_path: Path) -> None:
    server = HarvestServer(fail=1)
    hermes = provider(server, tmp_path)
    with pytest.raises(Unavailable):
        hermes.sync_turn("Kept.", "Ok.")
    hermes.shutdown()
    assert [len(spans) for _, spans in server.calls] == [2]
    assert hermes.pending() == 0
