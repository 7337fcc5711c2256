"""Documents already parsed, shape-checked and validated, by caller tenant and query text.

Validating a document against the schema costs milliseconds of Python (graphql-core walks
it once per rule), more than a recall's index calls; agents send the same few documents
again and again with different variables. So a valid document is kept, and a repeat of the
same text by the same tenant skips parsing and validation. The cost limits read the
variables (a ``topK``, an ``alsoScopes`` list), so they are checked again on every request.

Bounded: at most ``size`` entries, least recently used out first, and only texts up to
``MAX_QUERY_CHARS``; invalid documents are never kept. Keyed by tenant as well, so whether a
text was seen before (a faster answer) tells a caller only about its own tenant's requests.
A cached document is never changed: execution only reads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from graphql import DocumentNode, GraphQLError, GraphQLSchema

from palimpsest.errors import PalimpsestError
from palimpsest.graphql.limits import EdgeLimits, check_cost, cost, fragments_of, operations_of

MAX_QUERY_CHARS = 16 * 1024


class DocumentCache:
    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, str], DocumentNode] = OrderedDict()
        self._lock = threading.Lock()  # filled from the parsing threads, read on the loop

    @staticmethod
    def key(tenant: str, query: str) -> tuple[str, str] | None:
        return (tenant, query) if len(query) <= MAX_QUERY_CHARS else None

    def get(self, key: tuple[str, str]) -> DocumentNode | None:
        with self._lock:
            document = self._entries.get(key)
            if document is not None:
                self._entries.move_to_end(key)
            return document

    def put(self, key: tuple[str, str], document: DocumentNode) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[key] = document
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


def cost_errors(
    schema: GraphQLSchema,
    document: DocumentNode,
    variables: Mapping[str, Any] | None,
    limits: EdgeLimits,
) -> list[GraphQLError]:
    """The per-operation cost limits for these variables, as ``prepare`` checks them."""
    fragments = fragments_of(document)
    try:
        for op in operations_of(document):
            check_cost(cost(schema, op, fragments, variables or {}), limits)
    except GraphQLError as e:
        return [e]
    except PalimpsestError as e:
        return [GraphQLError(e.message, original_error=e)]
    return []
