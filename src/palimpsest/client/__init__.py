"""A typed Python client for a running Palimpsest server: ``Client`` and ``AsyncClient``.

It needs only httpx and ``palimpsest.errors`` (the error tree its refusals are raised as);
nothing of the server is imported. Results are frozen dataclasses with the schema's fields in
snake_case; inputs are the schema's input objects (``FactInput``, ``SpanInput``, ...).
"""

from __future__ import annotations

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
