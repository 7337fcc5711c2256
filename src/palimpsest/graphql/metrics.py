"""Prometheus metrics per GraphQL operation, labelled by root field (bounded by the schema)."""

from __future__ import annotations

import time
from collections.abc import Iterator

from graphql import FieldNode, OperationDefinitionNode
from prometheus_client import Counter, Histogram
from strawberry.extensions import SchemaExtension

OPERATION_SECONDS = Histogram(
    "palimpsest_graphql_operation_seconds", "GraphQL operation time", ["field"]
)
OPERATION_ERRORS = Counter(
    "palimpsest_graphql_operation_errors_total", "GraphQL operations with errors", ["field"]
)


class OperationMetrics(SchemaExtension):
    def on_execute(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        field = self._root_field()
        OPERATION_SECONDS.labels(field).observe(time.perf_counter() - started)
        result = self.execution_context.result
        if result is not None and result.errors:
            OPERATION_ERRORS.labels(field).inc()

    def _root_field(self) -> str:
        document = self.execution_context.graphql_document
        if document is None:
            return "invalid"
        for definition in document.definitions:
            if isinstance(definition, OperationDefinitionNode):
                names = [
                    s.name.value
                    for s in definition.selection_set.selections
                    if isinstance(s, FieldNode)
                ]
                # Executed documents are validated, so a single name is a schema field name.
                return names[0] if len(names) == 1 else "several"
        return "empty"
