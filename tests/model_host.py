"""A local stand-in for a remote model host, over real HTTP, speaking each protocol's wire format.

It stands in for the remote model only: our client, its retries and its checks run as they
would against a real host. Answers are shaped as the real APIs' are: a Chat Completions
``chat.completion`` whose message content is the JSON answer (structured outputs), a
Messages API ``message`` whose ``tool_use`` block holds it, and each API's error bodies
(``{"error": {...}}`` and ``{"type": "error", "error": {...}}``) with ``Retry-After``.

A test queues ``Reply`` values (``host.replies``); when none is queued, ``host.answer`` (a
function of the request) makes one. Every request is kept (``host.seen``).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the answer is sent (a slow host)
    chunks: int = 1  # the body sent in this many writes


@dataclass(frozen=True)
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _json(status: int, data: Any, **headers: str) -> Reply:
    return Reply(status, json.dumps(data).encode(), {"content-type": "application/json", **headers})


def chat_completion(
    answer: dict[str, Any] | str,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    usage: tuple[int, int] = (812, 64),
) -> Reply:
    """A Chat Completions answer; ``answer`` is the message content (a dict is sent as JSON)."""
    content = answer if isinstance(answer, str) else json.dumps(answer)
    return _json(
        200,
        {
            "id": "chatcmpl-local",
            "object": "chat.completion",
            "created": 1765000000,
            "model": "local-model",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None if refusal else content,
                        "refusal": refusal,
                    },
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
            },
        },
    )


def message_tool_use(
    answer: dict[str, Any],
    *,
    stop_reason: str = "tool_use",
    usage: tuple[int, int] = (900, 70),
    tool: str = "record_facts",
) -> Reply:
    """A Messages API answer: a forced call of the ``tool`` (the extractor's by default)
    holding ``answer``."""
    return _json(
        200,
        {
            "id": "msg_local",
            "type": "message",
            "role": "assistant",
            "model": "local-model",
            "content": [{"type": "tool_use", "id": "toolu_local", "name": tool, "input": answer}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        },
    )


def message_text(text: str, *, stop_reason: str = "end_turn") -> Reply:
    """A Messages API answer in prose (no tool call)."""
    return _json(
        200,
        {
            "id": "msg_local",
            "type": "message",
            "role": "assistant",
            "model": "local-model",
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 900, "output_tokens": 12},
        },
    )


def openai_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    code = kind if status != 429 else "rate_limit_exceeded"
    return _json(
        status,
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        **headers,
    )


def anthropic_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    return _json(status, {"type": "error", "error": {"type": kind, "message": message}}, **headers)


def facts_answer(*facts: dict[str, Any]) -> dict[str, Any]:
    return {"facts": list(facts)}


def verdicts_answer(*verdicts: tuple[str, str, str]) -> dict[str, Any]:
    """A judge's answer: ``(pair id, verdict, reason)`` per pair."""
    return {"verdicts": [{"pair": p, "verdict": v, "reason": r} for p, v, r in verdicts]}


def candidate(
    turn: str,
    quote: str,
    subject: tuple[str, str],
    predicate: str,
    obj: tuple[str, str] | None = None,
    value: str | None = None,
    valid_at: str | None = None,
    invalid_at: str | None = None,
) -> dict[str, Any]:
    return {
        "turn": turn,
        "quote": quote,
        "subject": {"type": subject[0], "name": subject[1]},
        "predicate": predicate,
        "object": None if obj is None else {"type": obj[0], "name": obj[1]},
        "value": value,
        "validAt": valid_at,
        "invalidAt": invalid_at,
    }


class ModelHost:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.answer: Callable[[Seen], Reply] = lambda _: chat_completion(facts_answer())
        self.url = ""

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length)
        seen = Seen(
            handler.path, {k.lower(): v for k, v in handler.headers.items()}, json.loads(raw)
        )
        self.seen.append(seen)
        reply = self.replies.popleft() if self.replies else self.answer(seen)
        if reply.delay:
            time.sleep(reply.delay)
        handler.send_response(reply.status)
        for k, v in reply.headers.items():
            handler.send_header(k, v)
        handler.send_header("content-length", str(len(reply.body)))
        handler.end_headers()
        step = max(1, len(reply.body) // reply.chunks)
        try:
            for at in range(0, len(reply.body), step):
                handler.wfile.write(reply.body[at : at + step])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (the answer was over its cap)


@contextmanager
def model_host() -> Iterator[ModelHost]:
    host = ModelHost()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            host._serve(self)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield host
    finally:
        server.shutdown()
        server.server_close()
