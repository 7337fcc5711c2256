"""The range indexes' shapes, read from their statements, that start-up compares with the
database's (an index of our name but another shape is remade)."""

from __future__ import annotations

from palimpsest.cypher import schema as q
from palimpsest.cypher.indexes import range_shapes


def test_every_range_index_statement_is_read_with_its_label_and_properties() -> None:
    shapes = range_shapes()
    assert len(shapes) == len(q.RANGE_INDEXES)
    assert shapes["memory_scope"] == ("Memory", ["scope_key"])
    assert shapes["pending_scope"] == ("PendingSpan", ["scope_key"])
    assert shapes["fact_writer"] == ("FACT", ["scope_key", "writer_key"])  # a relationship type
    assert shapes["pending_queue"] == ("PendingSpan", ["status", "lease_expires_at"])
