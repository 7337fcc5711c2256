"""LangGraph's own ``AsyncSqliteStore`` tests, unmodified, run against
``AsyncPalimpsestStore`` on the real server (the loader and the deselected tests:
langgraph_conformance.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from palimpsest.integrations.langgraph import AsyncPalimpsestStore, StoreIndex
from tests.integration import langgraph_conformance as harness

harness.load("test_store")
_module = harness.load("test_async_store")
_server: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def _serve(live_server_url: str, tenant: str, token: Callable[..., str]) -> None:
    _server.update(url=live_server_url, tenant=tenant, token=token)


def _open(index: StoreIndex | None = None) -> AsyncPalimpsestStore:
    minted = _server["token"](_server["tenant"], user=harness.fresh_user())
    return AsyncPalimpsestStore(url=_server["url"], token=minted, scope="USER", index=index)


@asynccontextmanager
async def _vector_store(
    fake_embeddings: Any, conn_string: str = ":memory:", text_fields: list[str] | None = None
) -> AsyncIterator[AsyncPalimpsestStore]:
    # The embedding is the server's; the conformance's client-side one is not used.
    async with _open(StoreIndex(fields=harness.index_for(text_fields)["fields"])) as store:
        yield store


vars(_module)["create_vector_store"] = _vector_store


@pytest.fixture
async def store() -> AsyncIterator[AsyncPalimpsestStore]:
    async with _open() as opened:
        yield opened


fake_embeddings = _module.fake_embeddings
conn_string = _module.conn_string
globals().update(harness.tests_of(_module, "test_async_store"))
