"""A Hermes Agent ``MemoryProvider`` over Palimpsest: ``prefetch`` through ``context``,
``sync_turn`` and ``on_pre_compress`` through ``harvest``.

``PalimpsestMemoryProvider(client)`` is registered from a Hermes memory plugin
(``ctx.register_memory_provider(...)``, docs/integrations/hermes.md). Before each turn
``prefetch`` answers the server's packed, cited ``context`` block for the user's message.
After each turn ``sync_turn`` banks the user's and the assistant's messages; before a
compression ``on_pre_compress`` banks the messages about to be summarised (generation: the
provider's count of compressions). A message is keyed by its place in the run and its text
(``positions.py``): a turn banked by ``sync_turn`` and again at compression is one span, and a
later message with the same text (a second "Yes.") is a span of its own.

Hermes catches a provider's exceptions and only logs them, so a failure to bank cannot stop
it. The provider therefore never relies on raising: spans the server did not take are written
first to a local spool (``<hermes_home>/palimpsest/spool.jsonl``, or ``spool_path``), sent
before anything else on the next ``sync_turn``, ``on_pre_compress`` or ``shutdown``, and the
error is raised after that, so Hermes logs it. ``pending()`` tells how many spans wait there.
Only spans the server refuses as such (``INVALID_ARGUMENT``) are not kept: they would be
refused again and hold the spool back; that error is raised as it is.
Needs Hermes Agent installed beside it (the client's ``hermes`` extra, docs/reference/hermes.md).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider

from palimpsest.client import Client, Scope, SpanInput
from palimpsest.errors import InvalidArgument, PalimpsestError, Unavailable
from palimpsest.integrations.banking import Banked, bank, content_text
from palimpsest.integrations.positions import Message, Positions, key
from palimpsest.integrations.spool import Spool

log = logging.getLogger(__name__)
ROLES = ("user", "assistant", "tool")  # system prompts are not dialogue


def dialogue(message: dict[str, Any]) -> Message | None:
    """One OpenAI-style message as (role, text), or None for one with nothing to remember."""
    role = str(message.get("role") or "")
    if role not in ROLES:
        return None
    parts = [content_text(message.get("content"))]
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        parts.append(f"[tool call {fn.get('name')}] {fn.get('arguments')}")
    text = "\n".join(p for p in parts if p.strip())
    if not text.strip():
        return None
    return role, text


def message_span(message: Message, source_id: str) -> SpanInput:
    role, text = message
    return SpanInput(text=text, speaker=role, role=role, source_id=source_id)


class PalimpsestMemoryProvider(MemoryProvider):  # type: ignore[misc]
    """Hermes memory in Palimpsest, for the user of the client's token."""

    def __init__(
        self, client: Client, *, budget_tokens: int = 800, spool_path: Path | None = None
    ) -> None:
        self.client = client
        self.budget_tokens = budget_tokens
        self.spool = Spool(spool_path) if spool_path is not None else None
        self.session_id = ""
        self.compressions = 0
        self.last = Banked()
        self.positions = Positions()
        # sync_turn runs on Hermes's worker thread, on_pre_compress on the agent's.
        self._placing = threading.Lock()

    @property
    def name(self) -> str:
        return "palimpsest"

    def is_available(self) -> bool:
        return bool(self.client.transport.rules.token)

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self.session_id = session_id
        home = kwargs.get("hermes_home")
        if self.spool is None and home:
            self.spool = Spool(Path(home) / "palimpsest" / "spool.jsonl")

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []  # context only: recall arrives through prefetch

    def system_prompt_block(self) -> str:
        return (
            "Long-term memory (Palimpsest) appears before each turn as lines starting with "
            "the id they cite, e.g. [note:key]."
        )

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if not query.strip():
            return ""
        block = self.client.context(Scope.USER, query, budget_tokens=self.budget_tokens)
        return block.text

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        turn = [{"role": "user", "content": user_content}]
        turn.append({"role": "assistant", "content": assistant_content})
        found = [m for m in map(dialogue, turn) if m is not None]
        with self._placing:
            labels = self.positions.turn(found)
        self._bank(self._spans(found, labels), 0)

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        found = [m for m in map(dialogue, messages) if m is not None]
        with self._placing:
            self.compressions += 1
            generation = self.compressions
            labels = self.positions.compressed(found)
        self._bank(self._spans(found, labels), generation)
        return ""

    def _spans(self, found: Sequence[Message], labels: Sequence[str]) -> list[SpanInput]:
        return [
            message_span(m, key(self.session_id, label, *m))
            for m, label in zip(found, labels, strict=True)
        ]

    def shutdown(self) -> None:
        try:
            if self.spool is not None:
                self.spool.drain(self.client)
        finally:
            self.client.close()

    def pending(self) -> int:
        """Spans kept in the spool, waiting for the server."""
        return len(self.spool.pending()) if self.spool is not None else 0

    def _bank(self, spans: list[SpanInput], generation: int) -> None:
        try:
            if self.spool is not None:
                self.spool.drain(self.client)
            self.last = bank(self.client, spans, generation)
        except InvalidArgument:
            raise  # the server refused these spans themselves: kept, they would block the spool
        except PalimpsestError as e:
            if self.spool is None:
                raise  # no place to keep them (initialize named no hermes_home)
            self.spool.keep(spans, generation)
            log.warning("the server did not take the spans: kept in the local spool")
            raise Unavailable(
                f"{e.message}; the spans are kept in {self.spool.path} and sent on the next call",
                code=e.code.value,
            ) from e

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        return json.dumps({"error": f"palimpsest has no tool {tool_name}"})


__all__ = ["PalimpsestMemoryProvider", "dialogue", "message_span"]
