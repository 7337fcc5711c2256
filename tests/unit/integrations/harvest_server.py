"""A stub of the server's ``harvest`` (and ``context``) for the runtime adapters' unit tests:
it records every call's spans and generation and banks a span once per ``sourceId``, as the
server does; ``context`` answers a block quoting the query."""

from __future__ import annotations

import json
from typing import Any

import httpx


class HarvestServer:
    def __init__(self, *, fail: int = 0) -> None:
        self.calls: list[tuple[int, list[dict[str, Any]]]] = []  # (generation, spans)
        self.seen: set[str] = set()
        self.queries: list[tuple[str, int]] = []  # context's (query, budget)
        self.fail = fail  # refuse this many calls first (FORBIDDEN: never retried), then bank

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        variables = body["variables"]
        if body["query"].startswith("query Context("):
            self.queries.append((variables["query"], variables["budgetTokens"]))
            block = {"text": f"[note:k] about {variables['query']}", "tokens": 5}
            block |= {"truncated": False, "items": []}
            return httpx.Response(200, json={"data": {"context": block}})
        if self.fail:
            self.fail -= 1
            error = {"message": "down", "extensions": {"code": "FORBIDDEN"}}
            return httpx.Response(200, json={"errors": [error]})
        spans, generation = variables["spans"], variables["compactionGeneration"]
        self.calls.append((generation, spans))
        fresh = [s for s in spans if s.get("sourceId") not in self.seen]
        self.seen |= {s["sourceId"] for s in spans if s.get("sourceId")}
        receipt = {
            "accepted": len(fresh),
            "duplicates": len(spans) - len(fresh),
            "spanIds": [f"s{i}" for i in range(len(fresh))],
            "compactionGeneration": generation,
        }
        return httpx.Response(200, json={"data": {"harvest": receipt}})

    def client_http(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))

    def async_http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))
