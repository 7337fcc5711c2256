"""Helpers of the runtime adapters' tests: a fresh user with a run token, the consolidator run
in-process, and what ``search`` then finds."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from palimpsest.client import AsyncClient, Client, RetryPolicy, Scope, Source
from palimpsest.client.recall_results import RecallHit
from palimpsest.resolvers.services import Services
from tests.integration.cycle import drain


@dataclass(frozen=True)
class Run:
    """One user's run: its tenant, user and token (with a run claim, which keys the spans)."""

    tenant: str
    user: str
    token: str

    def client(self, url: str) -> Client:
        return Client(url=url, token=self.token)

    def aclient(self, url: str) -> AsyncClient:
        return AsyncClient(url=url, token=self.token)


def new_run(token: Callable[..., str], agent: str = "planner") -> Run:
    tenant, user = f"t-{uuid.uuid4().hex[:10]}", "alice"
    run = f"run-{uuid.uuid4().hex[:8]}"
    return Run(tenant, user, token(tenant, user, agent, run=run, session="s-1"))


def unreachable_url() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


ONE_TRY = RetryPolicy(tries=1)


async def consolidated(svc: Services, run: Run) -> int:
    """Run the consolidator over the run's user; how many spans it turned into memory."""
    return (await drain(svc, run.tenant, run.user)).consolidated


async def turns_found(url: str, run: Run, query: str) -> list[RecallHit]:
    """The conversation turns ``search`` finds for ``query`` in the user's memory."""
    async with run.aclient(url) as c:
        result = await c.search(Scope.USER, query, top_k=10, sources=[Source.DOCUMENTS])
    return [h for h in result.hits if h.chunk_type is not None and h.chunk_type.value == "TURN"]
