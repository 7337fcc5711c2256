"""LangGraph's own ``SqliteStore`` tests, unmodified, run against ``PalimpsestStore`` on the
real server (the loader and the deselected tests: langgraph_conformance.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from palimpsest.integrations.langgraph import PalimpsestStore, StoreIndex
from tests.integration import langgraph_conformance as harness

_module = harness.load("test_store")
_server: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def _serve(live_server_url: str, tenant: str, token: Callable[..., str]) -> None:
    _server.update(url=live_server_url, tenant=tenant, token=token)


def _open(index: StoreIndex | None = None) -> PalimpsestStore:
    minted = _server["token"](_server["tenant"], user=harness.fresh_user())
    return PalimpsestStore(url=_server["url"], token=minted, scope="USER", index=index)


@contextmanager
def _vector_store(
    fake_embeddings: Any,
    text_fields: list[str] | None = None,
    distance_type: str = "cosine",
    conn_type: str = "memory",
) -> Iterator[PalimpsestStore]:
    # The embedding is the server's; the conformance's client-side one is not used.
    with _open(StoreIndex(fields=harness.index_for(text_fields)["fields"])) as store:
        yield store


vars(_module)["create_vector_store"] = _vector_store


@pytest.fixture
def store() -> Iterator[PalimpsestStore]:
    with _open() as opened:
        yield opened


fake_embeddings = _module.fake_embeddings
globals().update(harness.tests_of(_module, "test_store"))
