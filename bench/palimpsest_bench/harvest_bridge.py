"""The harvest bridge where runtimes compact (docs/reference/claude-agent.md): the Claude
Agent SDK's PreCompact hook over a transcript of ``messages`` messages (every tenth a tool
result of ``tool_kib`` KiB), on a server in this process.

It reports the transcript's size, the time to read it into spans (the SDK's session reader),
the hook's wall time and its ``harvest`` calls when every span is new, and again when every
span is a duplicate (a retried hook). A fresh tenant; the user is erased afterwards.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from palimpsest.client import AsyncClient
from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.integrations.banking import batches
from palimpsest.integrations.claude_agent import PalimpsestPreCompact, transcript_spans
from palimpsest.server import serve_in_thread


def transcript(messages: int, tool_kib: int) -> str:
    rows: list[dict[str, Any]] = []
    parent: str | None = None
    for i in range(messages):
        entry = str(uuid.uuid4())
        if i % 10 == 9:
            content: Any = [
                {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * tool_kib * 1024}
            ]
            role = "user"
        elif i % 2:
            content = [{"type": "text", "text": f"reply {i}: the lantern by the door is amber"}]
            role = "assistant"
        else:
            content = f"message {i}: where did I leave the amber lantern last spring?"
            role = "user"
        rows.append(
            {
                "type": role,
                "uuid": entry,
                "parentUuid": parent,
                "sessionId": "bench",
                "timestamp": "2026-11-30T10:00:00Z",
                "message": {"role": role, "content": content},
            }
        )
        parent = entry
    return "\n".join(json.dumps(r) for r in rows) + "\n"


def run(settings: Settings, messages: int = 2000, tool_kib: int = 8) -> dict[str, Any]:
    settings = settings.replace(log_level="WARNING", rate_limit_per_second=0)
    token = mint(
        load_keys(settings),
        tenant=f"bench-hb-{uuid.uuid4().hex[:8]}",
        user="bench",
        agent="claude",
        ttl_seconds=3600,
    )
    text = transcript(messages, tool_kib)
    started = time.perf_counter()
    _, spans = transcript_spans(text)
    out: dict[str, Any] = {
        "messages": len(spans),
        "transcript_bytes": len(text.encode()),
        "read_ms": round((time.perf_counter() - started) * 1000, 1),
        "harvest_calls": sum(1 for _ in batches(spans)),
    }
    # The hook's cost alone: no consolidator in the server shares the CPU with it.
    quiet = settings.replace(serve_consolidators=0)
    with tempfile.TemporaryDirectory() as d, serve_in_thread(quiet) as url:
        path = Path(d) / "bench.jsonl"
        path.write_text(text, encoding="utf-8")
        out.update(asyncio.run(_measure(url, token, path)))
    return out


async def _measure(url: str, token: str, path: Path) -> dict[str, Any]:
    event: Any = {
        "hook_event_name": "PreCompact",
        "session_id": "bench",
        "transcript_path": str(path),
        "cwd": ".",
        "trigger": "auto",
        "custom_instructions": None,
    }
    out: dict[str, Any] = {}
    async with AsyncClient(url=url, token=token, timeout=120) as client:
        hook = PalimpsestPreCompact(client)
        try:
            for label in ("new", "duplicates"):
                started = time.perf_counter()
                await hook(event, None, {"signal": None})
                out[label] = {
                    "hook_ms": round((time.perf_counter() - started) * 1000, 1),
                    "accepted": hook.last.accepted,
                    "duplicates": hook.last.duplicates,
                }
        finally:
            await client.transport.post("mutation { eraseMe { __typename } }", {})
    return out
