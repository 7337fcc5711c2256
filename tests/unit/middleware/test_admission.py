"""Admission control on its own: a fake downstream app that holds each request until told."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson

from palimpsest.errors import ErrorCode
from palimpsest.middleware.admission import Admission, Limits
from tests.unit.principals import principal

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


def request(
    name: str, path: str = "/graphql", method: str = "POST", token: bool = True, who: str = ""
) -> Any:
    """A request of its own principal (user ``name``), or of user ``who`` when given."""
    caller = principal(user_id=who or name)
    user = SimpleNamespace(principal=caller) if token else None
    return {"type": "http", "name": name, "path": path, "method": method, "user": user}


def gate_of(
    app: Any,
    max_in_flight: int,
    max_waiting: int,
    per_principal: int = 100,
    waiting_per_principal: int = 100,
    hold_seconds: float = 60.0,
) -> Admission:
    limits = Limits(max_in_flight, max_waiting, per_principal, waiting_per_principal, hold_seconds)
    return Admission(app, limits, routes=ROUTES)


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
    gate = gate_of(app, 2, 1)
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
    gate = gate_of(app, 1, 2)
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
    gate = gate_of(app, 1, 2)
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
    gate = gate_of(app, 1, 0)
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
    gate = gate_of(app, 0, 0)
    tasks = [asyncio.create_task(call(gate, request(n))) for n in "abc"]
    await settle()
    assert app.started == ["a", "b", "c"]
    for name in "abc":
        app.let_go(name)
    await asyncio.gather(*tasks)


async def test_one_principal_runs_only_its_share_and_others_pass_it() -> None:
    app = Held()
    gate = gate_of(app, max_in_flight=4, max_waiting=10, per_principal=2)
    mine = [asyncio.create_task(call(gate, request(n, who="flood"))) for n in ("a1", "a2", "a3")]
    await settle()
    other = asyncio.create_task(call(gate, request("b1")))
    await settle()
    assert app.started == ["a1", "a2", "b1"], "a3 waits for its own share, b1 does not"
    assert gate.running_by[("acme", "flood", "planner")] == 2
    app.let_go("b1")
    await settle()
    assert app.started == ["a1", "a2", "b1"], "a free slot is not the flood's to take"
    app.let_go("a1")
    await settle()
    assert app.started == ["a1", "a2", "b1", "a3"]
    for name in ("a2", "a3"):
        app.let_go(name)
    await asyncio.gather(*mine, other)
    assert (gate.running, len(gate.queue), dict(gate.running_by)) == (0, 0, {})


async def test_a_waiter_over_its_share_does_not_block_those_behind_it() -> None:
    app = Held()
    gate = gate_of(app, max_in_flight=2, max_waiting=10, per_principal=1)
    tasks = [
        asyncio.create_task(call(gate, request(name, who=who)))
        for name, who in (("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c"))
    ]
    await settle()
    assert app.started == ["a1", "b1"]  # a2 waits for a's share, c1 for a slot
    app.let_go("b1")
    await settle()
    assert app.started == ["a1", "b1", "c1"], "b1's slot skips a2, whose share is full"
    for name in ("a1", "a2", "c1"):
        app.let_go(name)
    await asyncio.gather(*tasks)
    assert (gate.running, len(gate.queue), dict(gate.waiting_by)) == (0, 0, {})


async def test_one_principal_cannot_fill_the_line_either() -> None:
    app = Held()
    gate = gate_of(app, max_in_flight=1, max_waiting=10, per_principal=1, waiting_per_principal=2)
    tasks = [asyncio.create_task(call(gate, request(f"a{i}", who="flood"))) for i in range(3)]
    await settle()
    refused = await call(gate, request("a3", who="flood"))
    [error] = orjson.loads(refused[1]["body"])["errors"]
    assert refused[0]["status"] == 503
    assert error["extensions"]["limit"] == "maxWaitingPerPrincipal"
    queued = asyncio.create_task(call(gate, request("b1")))
    await settle()
    assert len(gate.queue) == 3, "another caller still gets in line"
    for name in ("a0", "a1", "a2", "b1"):
        app.let_go(name)
    await asyncio.gather(*tasks, queued)
    assert (gate.running, len(gate.queue)) == (0, 0)


async def test_a_request_holds_its_slot_no_longer_than_the_bound() -> None:
    app = Held()  # "stuck" is never let go
    gate = gate_of(app, max_in_flight=1, max_waiting=1, hold_seconds=0.05)
    stuck = await call(gate, request("stuck"))
    assert stuck[0]["status"] == 503
    [error] = orjson.loads(stuck[1]["body"])["errors"]
    assert error["extensions"]["code"] == ErrorCode.UNAVAILABLE.value
    assert error["extensions"]["limit"] == "requestTimeout"
    assert (gate.running, dict(gate.running_by)) == (0, {})
    app.let_go("next")
    assert (await call(gate, request("next")))[0]["status"] == 200


async def test_a_stopped_request_that_had_started_its_response_sends_nothing_more() -> None:
    async def half(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await asyncio.Event().wait()

    gate = gate_of(half, max_in_flight=1, max_waiting=0, hold_seconds=0.05)
    sent = await call(gate, request("half"))
    assert [m["type"] for m in sent] == ["http.response.start"]
    assert gate.running == 0
