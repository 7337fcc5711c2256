"""What the runtime adapters share (``integrations.banking``): messages as spans, split into
numbered parts and batches the server takes, banked once per ``sourceId``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from palimpsest.client import AsyncClient, Client, SpanInput
from palimpsest.integrations import banking
from palimpsest.integrations.banking import (
    MAX_CALL_SPANS,
    MAX_SPAN_CHARS,
    Banked,
    abank,
    bank,
    batches,
    content_text,
    message_key,
    split,
)
from tests.unit.integrations.harvest_server import HarvestServer


def test_a_long_message_is_sent_as_numbered_parts_never_cut_short() -> None:
    text = "a" * MAX_SPAN_CHARS + "b" * 10
    parts = split(SpanInput(text=text, role="user", source_id="m1"))
    assert [p.source_id for p in parts] == ["m1#1", "m1#2"]
    assert "".join(p.text for p in parts) == text
    assert {p.role for p in parts} == {"user"}
    assert split(SpanInput(text="short", source_id="m2")) == [
        SpanInput(text="short", source_id="m2")
    ]
    unnamed = split(SpanInput(text=text))
    assert [p.source_id for p in unnamed] == [None, None]


def test_batches_hold_at_most_the_call_limits() -> None:
    many = [SpanInput(text="x") for _ in range(MAX_CALL_SPANS + 1)]
    assert [len(b) for b in batches(many)] == [MAX_CALL_SPANS, 1]
    # Big spans: about MAX_CALL_BYTES each call (each span weighs its bytes and 256).
    big = [SpanInput(text="y" * (60 * 1024)) for _ in range(20)]
    assert [len(b) for b in batches(big)] == [8, 8, 4]
    # A span over the span limit goes as parts, in the same batches.
    assert [len(b) for b in batches([SpanInput(text="z" * (MAX_SPAN_CHARS * 3))])] == [3]
    assert list(batches([])) == []


def test_a_message_without_an_id_is_keyed_by_its_role_and_text() -> None:
    assert message_key("user", "hi") == message_key("user", "hi")
    assert message_key("user", "hi") != message_key("assistant", "hi")
    assert len(message_key("user", "hi")) == 32


def test_content_blocks_become_one_text() -> None:
    blocks = [
        {"type": "text", "text": "Hello"},
        {"type": "tool_use", "name": "search", "input": {"q": "ada"}},
        {"type": "tool_result", "content": [{"type": "text", "text": "found"}]},
        {"type": "thinking", "thinking": "hidden"},
        {"type": "image"},
        "plain",
        42,
    ]
    assert content_text(blocks) == (
        'Hello\n[tool call search] {"q": "ada"}\n[tool result] found\nplain'
    )
    assert content_text(None) == ""
    assert content_text("as is") == "as is"
    assert content_text({"type": "text", "text": "one"}) == "one"


def test_bank_skips_blank_spans_and_adds_up_the_receipts() -> None:
    server = HarvestServer()
    spans = [
        SpanInput(text="a", source_id="1"),
        SpanInput(text="  "),
        SpanInput(text="b", source_id="2"),
    ]
    with Client("http://s", "tok", http=server.client_http()) as client:
        first = bank(client, spans, 3)
        again = bank(client, spans, 3)
    assert first == Banked(accepted=2, duplicates=0)
    assert again == Banked(accepted=0, duplicates=2)
    assert [(g, [s["text"] for s in sent]) for g, sent in server.calls] == [
        (3, ["a", "b"]),
        (3, ["a", "b"]),
    ]


async def test_abank_sends_each_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    server = HarvestServer()
    spans = [SpanInput(text=f"t{i}", source_id=str(i)) for i in range(3)]
    monkeypatch.setattr(banking, "MAX_CALL_SPANS", 2)
    async with AsyncClient("http://s", "tok", http=server.async_http()) as client:
        got = await abank(client, [*spans, replace(spans[0], text="")], 7)
    assert got == Banked(accepted=3, duplicates=0)
    assert [len(sent) for _, sent in server.calls] == [2, 1]
    assert {g for g, _ in server.calls} == {7}


def test_banked_adds_up() -> None:
    assert Banked(1, 2) + Banked(3, 4) == Banked(4, 6)
