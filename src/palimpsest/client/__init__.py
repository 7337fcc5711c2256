"""A typed Python client for a running Palimpsest server: ``Client`` and ``AsyncClient``.

It needs only httpx and ``palimpsest.errors`` (the error tree its refusals are raised as);
nothing of the server is imported. Results are frozen dataclasses with the schema's fields in
snake_case; inputs are the schema's input objects (``FactInput``, ``SpanInput``, ...).

Each name below is imported from its module on first use, so ``from palimpsest.client import
Client`` (a quick look at the command line) loads neither the asyncio flavour nor the inputs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from palimpsest.client import operations
    from palimpsest.client.aio import AsyncClient
    from palimpsest.client.enums import MemoryFileEdit, Scope, Source
    from palimpsest.client.inputs import (
        DocumentInput,
        EntityInput,
        FactInput,
        LegWeightsInput,
        MemoryFileCommandInput,
        PlacementItemInput,
        SourceInput,
        SpanInput,
        SqlStatementInput,
        WhenInput,
    )
    from palimpsest.client.sync import Client
    from palimpsest.client.transport import BOOKMARK_HEADER, RetryPolicy

# Each public name and the module it lives in (``operations`` is that module itself).
_HOMES = {
    "BOOKMARK_HEADER": "transport",
    "AsyncClient": "aio",
    "Client": "sync",
    "DocumentInput": "inputs",
    "EntityInput": "inputs",
    "FactInput": "inputs",
    "LegWeightsInput": "inputs",
    "MemoryFileCommandInput": "inputs",
    "MemoryFileEdit": "enums",
    "PlacementItemInput": "inputs",
    "RetryPolicy": "transport",
    "Scope": "enums",
    "Source": "enums",
    "SourceInput": "inputs",
    "SpanInput": "inputs",
    "SqlStatementInput": "inputs",
    "WhenInput": "inputs",
    "operations": "operations",
}

__all__ = [
    "BOOKMARK_HEADER",
    "AsyncClient",
    "Client",
    "DocumentInput",
    "EntityInput",
    "FactInput",
    "LegWeightsInput",
    "MemoryFileCommandInput",
    "MemoryFileEdit",
    "PlacementItemInput",
    "RetryPolicy",
    "Scope",
    "Source",
    "SourceInput",
    "SpanInput",
    "SqlStatementInput",
    "WhenInput",
    "operations",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{home}")
    value = module if name == home else getattr(module, name)
    globals()[name] = value  # the next look finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
