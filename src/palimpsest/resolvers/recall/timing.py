"""Where a recall's time goes: each stage's duration, as a Prometheus histogram
(``palimpsest_recall_stage_seconds{stage=...}``) and to in-process listeners (the latency
benchmark, which serves the API in its own process).

Stages (a fixed set, so the label stays bounded): ``stats`` (the scopes' term statistics),
``one`` (a search in one statement on the procedure engine: the statistics and every leg's
first read, ``recall/one.py``),
``embedding`` (the query), ``vector_<kind>`` and ``fulltext_<kind>`` (each leg, from its
start until its ranked list is ready; legs overlap), ``legs`` (all candidate legs, wall
time), ``fusion`` (RRF, boosts, time window, sorting), ``load`` (the final top-k with its
provenance), ``resolver`` (the whole resolver) and ``http_graphql`` (the rest of the HTTP
request that ran it: the edge, GraphQL parsing, validation and serialisation).

Timing is two ``perf_counter`` calls around an await; no query text, id or parameter is
ever recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from prometheus_client import Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

KINDS = ("facts", "notes", "documents")
STAGES = frozenset(
    {"stats", "one", "embedding", "legs", "fusion", "load", "resolver", "http_graphql"}
    | {f"{leg}_{kind}" for leg in ("vector", "fulltext") for kind in KINDS}
)
# Milliseconds matter here: the default buckets start at 5 ms.
_BUCKETS: tuple[float, ...] = (0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015)
_BUCKETS += (0.02, 0.025, 0.035, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5)
STAGE_SECONDS = Histogram(
    "palimpsest_recall_stage_seconds",
    "Time of one stage of a recall or search",
    ["stage"],
    buckets=_BUCKETS,
)
Listener = Callable[[str, float], None]
_listeners: list[Listener] = []


@dataclass(slots=True)
class _Request:
    """The recall time of one HTTP request, so the rest of it can be told apart."""

    resolver: float = 0.0
    recalls: int = 0


_request: ContextVar[_Request | None] = ContextVar("recall_timing_request", default=None)


def observe(stage: str, seconds: float) -> None:
    if stage not in STAGES:
        raise ValueError(f"unknown recall stage {stage!r}")
    STAGE_SECONDS.labels(stage).observe(seconds)
    if stage == "resolver" and (req := _request.get()) is not None:
        req.resolver += seconds
        req.recalls += 1
    for listener in tuple(_listeners):
        listener(stage, seconds)


@contextmanager
def timed(stage: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        observe(stage, time.perf_counter() - started)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Call ``listener(stage, seconds)`` for every stage observed meanwhile, on the thread
    that observed it (the API's, when the benchmark serves it in-process)."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


class RequestTiming:
    """ASGI middleware: for an HTTP request that ran a recall or search, observes
    ``http_graphql``, the request's time less the time spent in the recall resolvers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        req = _Request()
        token = _request.set(req)
        started = time.perf_counter()

        async def timed_send(message: Message) -> None:
            # Observed before the last byte leaves, so a client that has its answer also
            # finds the figure recorded.
            last = message["type"] == "http.response.body" and not message.get("more_body")
            if last and req.recalls:
                rest = time.perf_counter() - started - req.resolver
                observe("http_graphql", max(0.0, rest))
            await send(message)

        try:
            await self.app(scope, receive, timed_send)
        finally:
            _request.reset(token)
