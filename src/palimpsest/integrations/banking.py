"""What the runtime adapters share: messages as harvest spans, sent in batches the server takes.

``harvest`` refuses more than 1000 spans or 1 MiB per call (docs/reference/memory-cycle.md), so
a long eviction goes out in several calls, and a message longer than one span may be is sent
as numbered parts (``<id>#2``, ...), never cut short. Each span carries its message's id as
``sourceId``, harvest's idempotency key, so sending an eviction again (a retried hook) banks
nothing twice. Any failure propagates: an adapter decides whether it raises to the runtime or
keeps the spans locally (``palimpsest.integrations.spool``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from palimpsest.client import AsyncClient, Client, SpanInput

MAX_CALL_BYTES = 512 * 1024  # well under the server's 1 MiB, leaving room for the JSON around
MAX_CALL_SPANS = 500
MAX_SPAN_CHARS = 64 * 1024  # a longer message is sent as parts, never truncated


@dataclass(frozen=True, slots=True)
class Banked:
    """What one eviction banked: spans the server took as new, and those it already had."""

    accepted: int = 0
    duplicates: int = 0

    def __add__(self, other: Banked) -> Banked:
        return Banked(self.accepted + other.accepted, self.duplicates + other.duplicates)


def message_key(*parts: str) -> str:
    """A stable ``sourceId`` for a message that has no id of its own (its role and text)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def split(span: SpanInput) -> list[SpanInput]:
    """The span, or its numbered parts when its text is longer than one span may be."""
    if len(span.text) <= MAX_SPAN_CHARS:
        return [span]
    texts = [span.text[i : i + MAX_SPAN_CHARS] for i in range(0, len(span.text), MAX_SPAN_CHARS)]
    return [
        replace(span, text=t, source_id=f"{span.source_id}#{n}" if span.source_id else None)
        for n, t in enumerate(texts, start=1)
    ]


def batches(spans: Iterable[SpanInput]) -> Iterator[list[SpanInput]]:
    """Spans in calls of at most ``MAX_CALL_SPANS`` spans and about ``MAX_CALL_BYTES``."""
    batch: list[SpanInput] = []
    size = 0
    for span in (part for s in spans for part in split(s)):
        weight = len(span.text.encode()) + 256
        if batch and (len(batch) >= MAX_CALL_SPANS or size + weight > MAX_CALL_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(span)
        size += weight
    if batch:
        yield batch


async def abank(client: AsyncClient, spans: Sequence[SpanInput], generation: int) -> Banked:
    total = Banked()
    for batch in batches(s for s in spans if s.text.strip()):
        receipt = await client.harvest(batch, generation)
        total += Banked(receipt.accepted, receipt.duplicates)
    return total


def bank(client: Client, spans: Sequence[SpanInput], generation: int) -> Banked:
    total = Banked()
    for batch in batches(s for s in spans if s.text.strip()):
        receipt = client.harvest(batch, generation)
        total += Banked(receipt.accepted, receipt.duplicates)
    return total


def block_text(block: Any) -> str:
    """The text of one content block, Anthropic- or OpenAI-shaped: text as is, a tool call as
    its name and input, a tool result as its content; reasoning and images leave nothing."""
    if isinstance(block, str):
        return block
    if not isinstance(block, Mapping):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "tool_use":
        return f"[tool call {block.get('name')}] {json.dumps(block.get('input'), default=str)}"
    if kind == "tool_result":
        return f"[tool result] {content_text(block.get('content'))}"
    return ""


def content_text(content: Any) -> str:
    """A message's content (a string or a list of blocks) as one text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(t for t in (block_text(b) for b in content) if t.strip())
    return block_text(content)
