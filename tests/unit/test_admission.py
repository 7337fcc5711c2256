"""Admission control on its own: a fake downstream app that holds each request until told."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson

from palimpsest.admission import Admission
from palimpsest.errors import ErrorCode

ROUTES = {"/graphql": frozenset({"POST"}), "/mcp": frozenset({"POST"})}


class Held:
    """The app behind the middleware: each request waits for its own release."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release: dict[str, asyncio.Event] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        name = scope["name"]
        self.started.append(name)
        await self.release.setdefault(name, asyncio.Event()).wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    def let_go(self, name: str) -> None:
        self.release.setdefault(name, asyncio.Event()).set()


def request(name: str, path: str = "/graphql", method: str = "POST", token: bool = True) -> Any:
    user = SimpleNamespace(principal=object()) if token else None
    return {"type": "http", "name": name, "path": path, "method": method, "user": user}


async def call(gate: Admission, scope: Any) -> list[Any]:
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request"}

    await gate(scope, receive, send)
    return sent


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_two_run_one_waits_and_the_rest_are_refused_at_once() -> None:
    app = Held()
    gate = Admission(app, max_in_flight=2, max_waiting=1, routes=ROUTES)
    tasks = {n: asyncio.create_task(call(gate, request(n))) for n in ("a", "b", "c")}
    await settle()
    refused = await call(gate, request("d"))

    assert app.started == ["a", "b"]  # c waits in line, d never reaches the app
    assert refused[0]["status"] == 503
    assert (b"retry-after", b"1") in refused[0]["headers"]
    [error] = orjson.loads(refused[1]["body"])["errors"]
    assert error["extensions"]["code"] == ErrorCode.UNAVAILABLE.value
    assert error["extensions"]["limit"] == "maxInFlight"

    app.let_go("a")
    await settle()
    assert app.started == ["a", "b", "c"]  # a's slot went to c, the first in line
    for name in ("b", "c"):
        app.let_go(name)
    results = await asyncio.gather(*tasks.values())
    assert [r[0]["status"] for r in results] == [200, 200, 200]
    assert (gate.running, len(gate.queue)) == (0, 0)


async def test_a_waiter_that_leaves_gives_up_its_place() -> None:
    app = Held()
    gate = Admission(app, max_in_flight=1, max_waiting=2, routes=ROUTES)
    first = asyncio.create_task(call(gate, request("a")))
    await settle()
    leaving = asyncio.create_task(call(gate, request("b")))
    staying = asyncio.create_task(call(gate, request("c")))
    await settle()
    leaving.cancel()
    await settle()
    assert len(gate.queue) == 1  # its place is free for another waiter
    app.let_go("a")
    await settle()
    assert app.started == ["a", "c"]
    app.let_go("c")
    await asyncio.gather(first, staying)
    assert (gate.running, len(gate.queue)) == (0, 0)


async def test_a_slot_granted_to_a_waiter_that_just_left_passes_to_the_next() -> None:
    app = Held()
    gate = Admission(app, max_in_flight=1, max_waiting=2, routes=ROUTES)
    first = asyncio.create_task(call(gate, request("a")))
    await settle()
    granted = asyncio.create_task(call(gate, request("b")))
    after = asyncio.create_task(call(gate, request("c")))
    await settle()
    app.let_go("a")
    for _ in range(100):  # until a's slot has been handed to b, before b resumes
        if len(gate.queue) == 1:
            break
        await asyncio.sleep(0)
    assert len(gate.queue) == 1
    granted.cancel()
    await settle()
    assert app.started == ["a", "c"]
    app.let_go("c")
    await asyncio.gather(first, after)
    assert (gate.running, len(gate.queue)) == (0, 0)


async def test_health_checks_tokenless_requests_and_event_streams_are_never_held() -> None:
    app = Held()
    gate = Admission(app, max_in_flight=1, max_waiting=0, routes=ROUTES)
    busy = asyncio.create_task(call(gate, request("a")))
    await settle()
    others = [
        request("health", path="/healthz"),
        request("anonymous", token=False),
        request("stream", path="/mcp", method="GET"),
    ]
    tasks = [asyncio.create_task(call(gate, scope)) for scope in others]
    await settle()
    assert app.started == ["a", "health", "anonymous", "stream"]
    for name in app.started:
        app.let_go(name)
    await asyncio.gather(busy, *tasks)
    assert gate.running == 0


async def test_zero_switches_it_off() -> None:
    app = Held()
    gate = Admission(app, max_in_flight=0, max_waiting=0, routes=ROUTES)
    tasks = [asyncio.create_task(call(gate, request(n))) for n in "abc"]
    await settle()
    assert app.started == ["a", "b", "c"]
    for name in "abc":
        app.let_go(name)
    await asyncio.gather(*tasks)
