"""The Claude Agent SDK's PreCompact hook banks the context about to be compacted: driven with
the SDK's own hook types over a transcript file shaped as the CLI writes it, on the real server;
the banked messages come back from ``search`` after consolidation."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, HookContext, PreCompactHookInput

from palimpsest.client import AsyncClient, Scope
from palimpsest.errors import Unavailable
from palimpsest.integrations.claude_agent import PalimpsestPreCompact, hooks, transcript_spans
from palimpsest.resolvers.services import Services
from tests.integration.runtimes import (
    ONE_TRY,
    consolidated,
    new_run,
    turns_found,
    unreachable_url,
)

SESSION = "0f7c2d4e-1111-4a55-9e1e-3c2d1f0a9b77"


def entry(
    kind: str, parent: str | None, message: dict[str, Any] | None, **extra: Any
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/project",
        "sessionId": SESSION,
        "version": "2.1.0",
        "gitBranch": "main",
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "timestamp": "2026-11-30T10:00:00.000Z",
        **extra,
    }
    if message is not None:
        row["message"] = message
    return row


def transcript(path: Path) -> dict[str, str]:
    """A transcript after one compaction: an old segment, the boundary and its summary, then
    a meta message and the live conversation (a text turn, reasoning, a tool call and its
    result) with a sidechain off it. Returns the live messages' uuids by name."""
    old_user = entry("user", None, {"role": "user", "content": "an old question about Porto"})
    old_reply = entry(
        "assistant",
        old_user["uuid"],
        {"role": "assistant", "content": [{"type": "text", "text": "an old answer on Porto"}]},
    )
    boundary = entry(
        "system",
        None,
        None,
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid=old_reply["uuid"],
        compactMetadata={"trigger": "auto", "preTokens": 150000},
    )
    summary = entry(
        "user",
        boundary["uuid"],
        {"role": "user", "content": "This session is being continued; summary: Porto."},
        isCompactSummary=True,
    )
    meta = entry("user", summary["uuid"], {"role": "user", "content": "meta caveat"}, isMeta=True)
    said = entry(
        "user",
        meta["uuid"],
        {"role": "user", "content": "My cat is called Orzo and she hates thunderstorms."},
    )
    reply = entry(
        "assistant",
        said["uuid"],
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "private reasoning", "signature": "x"},
                {"type": "text", "text": "Orzo sounds lovely; I will remember the storms."},
            ],
        },
    )
    call = entry(
        "assistant",
        reply["uuid"],
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a.txt"}}
            ],
        },
    )
    result = entry(
        "user",
        call["uuid"],
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "vet on Tuesdays"}
            ],
        },
        toolUseResult={"stdout": "vet on Tuesdays"},
    )
    side = entry("user", said["uuid"], {"role": "user", "content": "a sidechain"}, isSidechain=True)
    rows = [old_user, old_reply, boundary, summary, meta, said, reply, call, result, side]
    text = "\n".join(json.dumps(r) for r in rows)
    # The CLI also writes lines without a uuid (summaries, snapshots): the reader skips them.
    text += '\n{"type": "summary", "summary": "Orzo", "leafUuid": "x"}\n{"type": "file-history'
    path.write_text(text + "\n", encoding="utf-8")
    return {
        "said": said["uuid"],
        "reply": reply["uuid"],
        "call": call["uuid"],
        "result": result["uuid"],
    }


def pre_compact(path: Path) -> PreCompactHookInput:
    return {
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": "/work/project",
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "custom_instructions": None,
    }


CONTEXT: HookContext = {"signal": None}


def test_the_transcript_reader_takes_the_live_chain_only(tmp_path: Path) -> None:
    ids = transcript(tmp_path / "t.jsonl")
    compactions, spans = transcript_spans((tmp_path / "t.jsonl").read_text(), {"user": "Alice"})
    assert compactions == 1
    assert [s.source_id for s in spans] == [ids["said"], ids["reply"], ids["call"], ids["result"]]
    assert [s.speaker for s in spans] == ["Alice", "assistant", "assistant", "Alice"]
    assert spans[1].text == "Orzo sounds lovely; I will remember the storms."  # no reasoning
    assert spans[2].text == '[tool call Read] {"path": "a.txt"}'
    assert spans[3].text == "[tool result] vet on Tuesdays"
    assert spans[0].observed_at is not None


async def test_pre_compact_banks_the_context_and_search_finds_it(
    live_server_url: str, token: Callable[..., str], svc: Services, tmp_path: Path
) -> None:
    run = new_run(token)
    path = tmp_path / f"{SESSION}.jsonl"
    transcript(path)
    async with run.aclient(live_server_url) as client:
        options = ClaudeAgentOptions(hooks=hooks(client, speakers={"user": "Alice"}))
        assert options.hooks is not None
        matcher = options.hooks["PreCompact"][0]
        assert matcher.on_failure == "block"
        callback = matcher.hooks[0]
        assert await callback(pre_compact(path), None, CONTEXT) == {}
        assert isinstance(callback, PalimpsestPreCompact)
        assert (callback.last.accepted, callback.last.duplicates) == (4, 0)
        # A retried hook banks nothing twice: each message's uuid is its sourceId.
        assert await callback(pre_compact(path), None, CONTEXT) == {}
        assert (callback.last.accepted, callback.last.duplicates) == (0, 4)
    assert await consolidated(svc, run) == 4
    hits = await turns_found(live_server_url, run, "what is the cat called")
    texts = [h.text for h in hits]
    assert "Alice: My cat is called Orzo and she hates thunderstorms." in texts
    hit = next(h for h in hits if "Orzo and she" in h.text)
    assert hit.provenance is not None
    assert hit.provenance.origin.value == "COMPACTION"
    assert hit.provenance.compaction_generation == 2  # one compaction before this one
    everything = "\n".join(texts)
    for absent in ("old answer on Porto", "summary: Porto", "sidechain", "meta caveat", "private"):
        assert absent not in everything
    async with run.aclient(live_server_url) as client:
        found = await client.search(Scope.USER, "vet on Tuesdays", top_k=5)
    assert any("vet on Tuesdays" in h.text for h in found.hits)


async def test_an_unreachable_server_fails_the_hook(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    transcript(path)
    async with AsyncClient(url=unreachable_url(), token="t", retry=ONE_TRY) as client:
        callback = PalimpsestPreCompact(client)
        with pytest.raises(Unavailable, match="cannot reach the Palimpsest server"):
            await callback(pre_compact(path), None, CONTEXT)
