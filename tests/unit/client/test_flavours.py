"""``AsyncClient`` is ``Client`` method for method: the same names, parameters and results."""

from __future__ import annotations

import inspect

from palimpsest.client import AsyncClient, Client

SYNC_ONLY = {"close"}
ASYNC_ONLY = {"aclose"}


def public(cls: type) -> dict[str, object]:
    return {n: f for n, f in vars(cls).items() if not n.startswith("_") and callable(f)}


def test_the_async_client_has_every_method_as_a_coroutine_with_the_same_signature() -> None:
    sync, aio = public(Client), public(AsyncClient)
    assert set(sync) - SYNC_ONLY == set(aio) - ASYNC_ONLY
    for name in set(sync) - SYNC_ONLY:
        assert inspect.iscoroutinefunction(aio[name]), name
        assert inspect.signature(aio[name]) == inspect.signature(sync[name]), name  # type: ignore[arg-type]
