"""Embedding slots (cypher/slots.py): slot b's statements name slot b's property and indexes,
and the parameter maps follow, so every scoped statement reads and writes the active slot."""

from __future__ import annotations

from palimpsest.cypher import recall as recall_q
from palimpsest.cypher.slots import params_on, text_on
from tests.unit.cypher.test_statements import all_statements


def test_slot_a_is_the_statement_as_written() -> None:
    text = "MATCH (m:Memory) SET m.embedding = $embedding"
    assert text_on(text, "a") is text
    params = {"embedding": [0.1], "rows": [{"embedding": [0.2]}]}
    assert params_on(params, "a") is params


def test_slot_b_renames_property_access_and_index_names_only() -> None:
    text = (
        "SEARCH m IN (VECTOR INDEX memory_embedding FOR $vector LIMIT 5) SCORE AS s "
        "SET m.embedding = $embedding, x.embedding = r.embedding, m.embedding_model = 1 "
        "RETURN {id: 1, embedding: m.embedding} AS e, s.embedding_of AS f, $embeddings AS g"
    )
    assert text_on(text, "b") == (
        "SEARCH m IN (VECTOR INDEX memory_embedding_b FOR $vector LIMIT 5) SCORE AS s "
        "SET m.embedding_b = $embedding, x.embedding_b = r.embedding_b, m.embedding_model = 1 "
        "RETURN {id: 1, embedding: m.embedding_b} AS e, s.embedding_of AS f, $embeddings AS g"
    )


def test_slot_b_renames_nested_keys_and_leaves_the_callers_maps_alone() -> None:
    rows = [{"id": "c1", "embedding": [0.5, 0.5], "props": {"text": "t"}}]
    params = {"embedding": [0.1], "rows": rows, "chunk": {"embedding": [0.3]}, "n": 3}
    moved = params_on(params, "b")
    assert moved == {
        "embedding": [0.1],  # a top-level name: the text keeps ``$embedding``
        "rows": [{"id": "c1", "embedding_b": [0.5, 0.5], "props": {"text": "t"}}],
        "chunk": {"embedding_b": [0.3]},
        "n": 3,
    }
    assert rows == [{"id": "c1", "embedding": [0.5, 0.5], "props": {"text": "t"}}]


def test_every_vector_index_a_scoped_statement_searches_has_a_slot_b_twin() -> None:
    searched = {
        name
        for _, s in all_statements()
        if s.scoped
        for name in ("memory_embedding", "chunk_embedding", "fact_embedding")
        if f"VECTOR INDEX {name} " in s.text
    }
    assert searched == {"memory_embedding", "chunk_embedding", "fact_embedding"}
    for _, s in all_statements():
        if s.scoped and "embedding" in s.text:
            moved = text_on(s.text, "b")
            assert ".embedding " not in moved, s.name
            assert ".embedding," not in moved, s.name
            assert "VECTOR INDEX memory_embedding " not in moved, s.name
    assert "VECTOR INDEX chunk_embedding_b " in text_on(recall_q.VECTOR_CHUNKS.text, "b")
