"""Embedding slots (cypher/slots.py): slot b's statements name slot b's property and indexes,
and the parameter maps follow, so every scoped statement reads and writes the active slot."""

from __future__ import annotations

import re
from typing import Any

from palimpsest.cypher import passages as passages_q
from palimpsest.cypher import recall as recall_q
from palimpsest.cypher.slots import DualVector, names_dual, params_on, text_on
from palimpsest.embedding import Vector
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
        for name in ("memory_embedding", "chunk_embedding", "fact_embedding", "passage_embedding")
        if f"VECTOR INDEX {name} " in s.text
    }
    assert searched == {
        "memory_embedding",
        "chunk_embedding",
        "fact_embedding",
        "passage_embedding",
    }
    for _, s in all_statements():
        if s.scoped and "embedding" in s.text:
            moved = text_on(s.text, "b")
            assert ".embedding " not in moved, s.name
            assert ".embedding," not in moved, s.name
            assert "VECTOR INDEX memory_embedding " not in moved, s.name
    assert "VECTOR INDEX chunk_embedding_b " in text_on(recall_q.VECTOR_CHUNKS.text, "b")
    assert "VECTOR INDEX passage_embedding_b " in text_on(passages_q.VECTOR_PASSAGES.text, "b")


def dual(active: list[float], target: list[float], slot: str = "b") -> DualVector:
    assert slot in ("a", "b")
    return DualVector(Vector(active), Vector(target), "b" if slot == "b" else "a")


def test_without_a_migration_a_dual_vector_is_written_as_the_active_vector() -> None:
    params = {"rows": [{"embedding": dual([0.1, 0.2, 0.3], [0.9, 0.8])}]}
    assert params_on(params, "a") is params  # steady: the parameters are not even walked


def test_a_map_written_whole_gets_the_target_slot_as_plain_keys() -> None:
    chunks: list[dict[str, Any]] = [
        {"id": "c1", "embedding": dual([0.1, 0.2, 0.3], [0.9, 0.8])},
        {"id": "c2"},
    ]
    split = params_on({"chunks": chunks, "n": 1}, "a", dual=True)
    assert split == {
        "chunks": [
            {
                "id": "c1",
                "embedding": [0.1, 0.2, 0.3],
                "embedding_b": [0.9, 0.8],
                "embedding_b_of": [0.1, 0.2],
            },
            {"id": "c2"},
        ],
        "n": 1,
    }
    assert type(split["chunks"][0]["embedding"]) is Vector  # the driver gets a plain vector
    assert "embedding_b" not in chunks[0]  # the caller's map is left alone


def test_a_statement_naming_the_property_gets_the_target_as_a_map() -> None:
    vector = dual([0.4, 0.5, 0.6], [0.7, 0.8])
    split = params_on(
        {"embedding": vector, "embedding_dual": None, "facts": [{"embedding": vector}]},
        "a",
        dual=True,
        as_map=True,
    )
    target = {"embedding_b": [0.7, 0.8], "embedding_b_of": [0.4, 0.5]}
    assert split == {
        "embedding": [0.4, 0.5, 0.6],
        "embedding_dual": target,  # the caller's placeholder does not hide it
        "facts": [{"embedding": [0.4, 0.5, 0.6], "embedding_dual": target}],
    }


def test_a_migration_from_slot_b_fills_slot_a() -> None:
    split = params_on({"r": {"embedding": dual([1.0, 2.0], [3.0, 4.0], "a")}}, "b", dual=True)
    assert split == {
        "r": {"embedding_b": [1.0, 2.0], "embedding": [3.0, 4.0], "embedding_of": [1.0, 2.0]}
    }


def test_a_write_racing_a_cutover_puts_each_model_in_its_own_slot() -> None:
    # Embedded while b was the target; written once b is active.
    split = params_on({"r": {"embedding": dual([1.0, 2.0], [3.0, 4.0], "b")}}, "b", dual=True)
    assert split == {
        "r": {"embedding_b": [3.0, 4.0], "embedding": [1.0, 2.0], "embedding_b_of": [1.0, 2.0]}
    }


def test_every_statement_that_writes_a_vector_writes_the_target_slot_too() -> None:
    writers = 0
    for _, s in all_statements():
        for m in re.finditer(r"(\w+)\.embedding = ", s.text):
            writers += 1
            assert f"{m.group(1)} += coalesce(" in s.text, s.name
            assert names_dual(s.text), s.name
    assert writers >= 10
