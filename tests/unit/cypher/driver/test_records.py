"""Records become plain rows exactly as ``record.data()`` made them (graph types as property
maps), with driver DateTimes as UTC ``datetime``; only faster."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import neo4j
from neo4j.graph import Graph, Node, Path, Relationship
from neo4j.time import Date, DateTime

from palimpsest.cypher.driver.records import native


def _old(record: neo4j.Record) -> dict[str, Any]:
    """The conversion before: the driver's exporter, then DateTimes (nested too)."""

    def convert(value: Any) -> Any:
        if isinstance(value, DateTime):
            return value.to_native().astimezone(UTC)
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, list) and value and not isinstance(value[0], (int, float)):
            return [convert(v) for v in value]
        return value

    return {k: convert(v) for k, v in record.data().items()}


def graph_values() -> tuple[Node, Relationship, Path]:
    g = Graph()
    at = DateTime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
    a = Node(g, "a", 1, {"Chunk"}, {"id": "c1", "at": at, "tags": ["x", "y"]})
    b = Node(g, "b", 2, {"Entity"}, {"name": "Lisbon"})
    r = Relationship(g, "r", 3, {"since": at})
    r._start_node, r._end_node = a, b
    return a, r, Path(a, r)


def test_rows_are_what_record_data_gave() -> None:
    at = DateTime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)
    node, rel, path = graph_values()
    values = {
        "plain": "text",
        "n": 3,
        "none": None,
        "flag": True,
        "vector": [0.1, 0.2, 0.3],
        "ids": ["a", "b"],
        "at": at,
        "day": Date(2024, 5, 1),
        "map": {"when": at, "nested": [{"at": at}, {"at": None}]},
        "cues": [[1714557600000, [2024], True, "Mira", False], [None, None, False, None, True]],
        "pairs": [["k", at], ["j", 1]],
        "node": node,
        "rel": rel,
        "path": path,
        "nodes": [node],
    }
    record = neo4j.Record(values.items())  # type: ignore[no-untyped-call]
    row = native(record)
    assert row == _old(record)
    assert row["at"] == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert row["map"]["nested"][0]["at"] == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    at_utc = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert row["node"] == {"id": "c1", "at": at_utc, "tags": ["x", "y"]}
    assert row["rel"][1] == "Relationship"
    assert row["path"][0] == row["node"]
