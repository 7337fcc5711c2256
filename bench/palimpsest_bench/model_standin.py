"""A model host stand-in for throughput runs: Chat Completions over real HTTP, answering
after a fixed latency, so a bench can time the memory cycle with the ``model`` extractor and
the judge switched on without a model (``bench harvest --model-latency``).

It answers an extraction call with one fact per turn (the speaker ``mentions`` the turn's
first words, quoted from the turn, so the server's checks keep it) and a judging call with
``compatible`` for every pair. What it answers is not a model's quality: only its shape and
its latency matter here.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

QUOTE_CHARS = 40
USAGE = {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    shown = json.loads(request["messages"][-1]["content"])
    schema = request.get("response_format", {}).get("json_schema", {}).get("name")
    if schema == "record_verdicts":
        return {
            "verdicts": [
                {"pair": p["id"], "verdict": "compatible", "reason": "Both may hold."}
                for p in shown["pairs"]
            ]
        }
    facts = []
    for t in shown["turns"]:
        quote = " ".join(t["text"][:QUOTE_CHARS].split()[:-1]) or t["text"][:QUOTE_CHARS]
        facts.append(
            {
                "turn": t["id"],
                "quote": quote,
                "subject": {"type": "person", "name": "I"},
                "predicate": "mentions",
                "object": None,
                "value": quote,
                "validAt": None,
                "invalidAt": None,
            }
        )
    return {"facts": facts}


@contextmanager
def model_standin(latency: float) -> Iterator[str]:
    """Serve until the block ends; yields the base URL (``.../v1``) to configure."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            time.sleep(latency)
            body = {
                "id": "chatcmpl-standin",
                "object": "chat.completion",
                "model": "standin",
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": json.dumps(_answer(json.loads(raw))),
                            "refusal": None,
                        },
                        "finish_reason": "stop",
                    }
                ],
                "usage": USAGE,
            }
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
