"""The Claude Agent SDK's PreCompact hook (``integrations.claude_agent``) against the stub
server: the live chain of a transcript banked with each entry's uuid as its ``sourceId``, in
the generation after the compactions it records; the refusals name what is wrong."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import HookContext, PreCompactHookInput

from palimpsest.client import AsyncClient
from palimpsest.errors import InvalidArgument
from palimpsest.integrations.claude_agent import PalimpsestPreCompact, hooks, transcript_spans
from tests.unit.integrations.harvest_server import HarvestServer

CONTEXT: HookContext = {"signal": None}


def entry(kind: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "timestamp": extra.pop("timestamp", "2026-11-30T10:00:00.000Z"),
        "sessionId": "s",
        "message": {"role": kind, "content": content},
        **extra,
    }


def transcript(path: Path, compactions: int = 0) -> list[str]:
    """Two live messages (and an empty one) after ``compactions`` boundaries: their uuids."""
    rows: list[dict[str, Any]] = []
    parent: str | None = None
    for _ in range(compactions):
        boundary: dict[str, Any] = {"type": "system", "subtype": "compact_boundary"}
        boundary |= {"uuid": str(uuid.uuid4()), "parentUuid": parent, "sessionId": "s"}
        boundary |= {"timestamp": "2026-11-30T09:00:00Z"}
        rows.append(boundary)
        parent = boundary["uuid"]
    said = entry("user", parent, "Orzo hates storms.", timestamp="not a time")
    blank = entry("assistant", said["uuid"], [{"type": "thinking", "thinking": "hidden"}])
    reply = entry("assistant", blank["uuid"], [{"type": "text", "text": "Noted."}])
    rows += [said, blank, reply]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return [said["uuid"], reply["uuid"]]


def pre_compact(path: Path, event: str = "PreCompact") -> PreCompactHookInput:
    return {
        "session_id": "s",
        "transcript_path": str(path),
        "cwd": "/work",
        "hook_event_name": event,  # type: ignore[typeddict-item]
        "trigger": "auto",
        "custom_instructions": None,
    }


def test_the_reader_names_speakers_and_skips_what_has_no_text(tmp_path: Path) -> None:
    ids = transcript(tmp_path / "t.jsonl", compactions=2)
    compactions, spans = transcript_spans((tmp_path / "t.jsonl").read_text(), {"user": "Ada"})
    assert compactions == 2
    assert [s.source_id for s in spans] == ids
    assert [(s.speaker, s.role, s.text) for s in spans] == [
        ("Ada", "user", "Orzo hates storms."),
        ("assistant", "assistant", "Noted."),
    ]
    assert spans[0].observed_at is None  # an unreadable timestamp is left out
    assert spans[1].observed_at is not None


async def test_the_hook_banks_the_live_messages_in_the_next_generation(tmp_path: Path) -> None:
    ids = transcript(tmp_path / "t.jsonl", compactions=1)
    server = HarvestServer()
    async with AsyncClient("http://s", "tok", http=server.async_http()) as client:
        hook = PalimpsestPreCompact(client, speakers={"user": "Ada"})
        assert await hook(pre_compact(tmp_path / "t.jsonl"), None, CONTEXT) == {}
        await hook(pre_compact(tmp_path / "t.jsonl"), None, CONTEXT)  # a retried hook
    assert (hook.last.accepted, hook.last.duplicates) == (0, 2)
    [(generation, spans), _] = server.calls
    assert generation == 2
    assert [s["sourceId"] for s in spans] == ids
    assert spans[0]["speaker"] == "Ada"


async def test_another_event_or_an_unreadable_transcript_is_refused(tmp_path: Path) -> None:
    server = HarvestServer()
    async with AsyncClient("http://s", "tok", http=server.async_http()) as client:
        hook = PalimpsestPreCompact(client)
        with pytest.raises(InvalidArgument, match="answers PreCompact, not Stop"):
            await hook(pre_compact(tmp_path / "t.jsonl", "Stop"), None, CONTEXT)
        with pytest.raises(InvalidArgument, match="cannot read the transcript at"):
            await hook(pre_compact(tmp_path / "missing.jsonl"), None, CONTEXT)
    assert server.calls == []


async def test_hooks_block_compaction_when_banking_fails_by_default() -> None:
    async with AsyncClient("http://s", "tok", http=HarvestServer().async_http()) as client:
        [matcher] = hooks(client, timeout=5)["PreCompact"]
        [callback] = matcher.hooks
        assert isinstance(callback, PalimpsestPreCompact)
        assert (matcher.on_failure, matcher.timeout) == ("block", 5)
        assert hooks(client, on_failure="continue")["PreCompact"][0].on_failure == "continue"
