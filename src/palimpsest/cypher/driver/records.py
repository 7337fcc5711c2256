"""Driver records as plain rows: what ``record.data()`` gives, with temporal values as
``datetime``, but without the driver exporter's per-value checks."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import neo4j
from neo4j.graph import Node, Path, Relationship
from neo4j.time import DateTime

Row = dict[str, Any]


def native(record: neo4j.Record) -> Row:
    # Not ``record.data()``: its exporter runs abstract-class checks on every nested value,
    # which cost more than the query itself for a leg's lists of a thousand rows.
    return {k: convert(v) for k, v in zip(record.keys(), record.values(), strict=True)}


_PLAIN = frozenset({str, int, float, bool, type(None)})
_NUMBERS = frozenset({int, float})


def convert(value: Any) -> Any:
    """Driver values as ``record.data()`` gives them (graph types as property maps), with
    temporal values as ``datetime``, also inside map projections and nested lists (export's
    ``[key, value]`` pairs); lists of numbers (embeddings) are left alone."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:
        if value and type(value[0]) in _NUMBERS:
            return value
        if set(map(type, value)) <= _PLAIN:
            return value  # a leg's ids or stored terms: tens of thousands of plain values
        return [convert(v) for v in value]
    if kind is dict:
        return {k: convert(v) for k, v in value.items()}
    if isinstance(value, DateTime):
        # Fixed-offset UTC: a named "UTC" zone written back would compare as a different,
        # later instant than the same moment with offset Z, breaking half-open intervals.
        return value.to_native().astimezone(UTC)
    if isinstance(value, Node):
        return convert(dict(value))
    if isinstance(value, Relationship):
        ends = [{} if n is None else dict(n) for n in (value.start_node, value.end_node)]
        return (convert(ends[0]), type(value).__name__, convert(ends[1]))
    if isinstance(value, Path):
        path = [convert(value.start_node)]
        for i, rel in enumerate(value.relationships):
            path += [type(rel).__name__, convert(value.nodes[i + 1])]
        return path
    return value
