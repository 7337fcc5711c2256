"""The Claude Agent SDK's ``PreCompact`` hook, banking what compaction is about to summarise.

``PalimpsestPreCompact(client)`` is a hook callback: when the CLI is about to compact, it reads
the session transcript the hook input names (``transcript_path``, the JSONL the CLI writes),
takes the conversation the CLI holds now (the chain of visible user and assistant messages
from the last compaction on, as the SDK's own session reader builds it) and banks each message
through ``harvest`` with the transcript entry's ``uuid`` as its ``sourceId``. A retried hook
banks nothing twice. The compaction generation is the number of compactions the transcript
already records, plus one.

``hooks(client)`` gives the ``ClaudeAgentOptions(hooks=...)`` mapping, with
``on_failure="block"``: when the server cannot be reached the callback raises, and the CLI
blocks the compaction, so the messages stay in the context and nothing is evicted unbanked.
Needs the client distribution's extra ``claude-agent`` (``pip install './client[claude-agent]'``).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import HookContext, HookJSONOutput, HookMatcher
from claude_agent_sdk import HookInput as SdkHookInput

# The SDK's own transcript reader (get_session_messages is built on these): the chain the CLI
# resumes from, which stops at the last compact boundary.
from claude_agent_sdk._internal.sessions import (
    _build_conversation_chain,
    _is_visible_message,
    _parse_transcript_entries,
)
from claude_agent_sdk.types import HookEvent

from palimpsest.client import AsyncClient, SpanInput
from palimpsest.errors import InvalidArgument
from palimpsest.integrations.banking import Banked, abank, content_text

log = logging.getLogger(__name__)


def transcript_spans(
    text: str, speakers: dict[str, str] | None = None
) -> tuple[int, list[SpanInput]]:
    """A transcript's compactions so far and the spans of the messages in context now."""
    entries = _parse_transcript_entries(text)
    compactions = sum(
        1 for e in entries if e.get("type") == "system" and e.get("subtype") == "compact_boundary"
    )
    names = speakers or {}
    spans = []
    for entry in _build_conversation_chain(entries):
        # The summary of an earlier compaction is not dialogue: its turns were banked then.
        if not _is_visible_message(entry) or entry.get("isCompactSummary"):
            continue
        message = entry.get("message") or {}
        role = str(message.get("role") or entry["type"])
        body = content_text(message.get("content"))
        if not body.strip():
            continue
        spans.append(
            SpanInput(
                text=body,
                speaker=names.get(role, role),
                role=role,
                observed_at=_instant(entry.get("timestamp")),
                source_id=str(entry["uuid"]),
            )
        )
    return compactions, spans


class PalimpsestPreCompact:
    """A ``PreCompact`` hook callback banking the context about to be compacted.

    ``speakers`` names the roles in the banked turns (``{"user": "Alice"}``); by default a
    turn's speaker is its role.
    """

    def __init__(self, client: AsyncClient, *, speakers: dict[str, str] | None = None) -> None:
        self.client = client
        self.speakers = dict(speakers or {})
        self.last = Banked()

    async def __call__(
        self, input_data: SdkHookInput, tool_use_id: str | None, context: HookContext
    ) -> HookJSONOutput:
        if input_data["hook_event_name"] != "PreCompact":
            raise InvalidArgument(
                f"PalimpsestPreCompact answers PreCompact, not {input_data['hook_event_name']}"
            )
        path = Path(input_data["transcript_path"])
        try:
            text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except OSError as e:
            raise InvalidArgument(f"cannot read the transcript at {path}: {e}") from e
        compactions, spans = transcript_spans(text, self.speakers)
        self.last = await abank(self.client, spans, compactions + 1)
        log.info(
            "banked the context before compaction",
            extra={"accepted": self.last.accepted, "duplicates": self.last.duplicates},
        )
        return {}


def hooks(
    client: AsyncClient,
    *,
    speakers: dict[str, str] | None = None,
    on_failure: Literal["continue", "block"] = "block",
    timeout: float | None = None,
) -> dict[HookEvent, list[HookMatcher]]:
    """``ClaudeAgentOptions(hooks=hooks(client))``: the PreCompact hook, blocking compaction
    when banking fails (``on_failure="block"``)."""
    callback = PalimpsestPreCompact(client, speakers=speakers)
    return {"PreCompact": [HookMatcher(hooks=[callback], timeout=timeout, on_failure=on_failure)]}


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


__all__ = ["PalimpsestPreCompact", "hooks", "transcript_spans"]
