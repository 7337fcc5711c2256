"""Copies of a template tenant: what changes (tenant, scope, ids, vectors) and what does not."""

from __future__ import annotations

import numpy as np
import pytest

from palimpsest_bench.tenant_clone import (
    Row,
    Template,
    classify,
    copy_rows,
    derived_id,
    key_of,
    noisy,
    shift,
)

DIMS = 4
OLD_TENANT = "tpl-tenant"
CHUNK_ID = "0123456789abcdef0123456789abcdef"
DOC_ID = "fedcba9876543210fedcba9876543210"


def unit(*values: float) -> list[float]:
    v = np.asarray(values, dtype=float)
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


def template() -> Template:
    key = key_of(OLD_TENANT)
    doc = classify(
        {"tenant_id": OLD_TENANT, "scope_key": key, "writer_key": key, "id": DOC_ID, "n": 3},
        OLD_TENANT,
        DIMS,
    )
    doc.labels = ["Document"]
    chunk = classify(
        {
            "tenant_id": OLD_TENANT,
            "scope_key": key,
            "id": CHUNK_ID,
            "document_id": DOC_ID,
            "text": "Maria sold the cargo",
            "embedding": unit(1, 2, 3, 4),
            "ft_tf": [1, 2],
            "years": [2001],
        },
        OLD_TENANT,
        DIMS,
    )
    chunk.labels = ["Chunk"]
    root = classify({"scope_key": key}, OLD_TENANT, DIMS)
    root.type = "HAS_ROOT"
    root.ends = (0, 1)
    return Template(OLD_TENANT, [doc, chunk], [root], DIMS)


def test_classify_finds_ids_vectors_and_leaves_other_lists_alone() -> None:
    row = template().nodes[1]
    assert sorted(row.ids) == ["document_id", "id"]
    assert row.vectors == ["embedding"]
    assert row.id_lists == []  # ft_tf and years are not ids


def test_classify_refuses_the_tenant_inside_a_longer_string() -> None:
    with pytest.raises(ValueError, match="names the template's tenant"):
        classify({"note": f"written by {OLD_TENANT}"}, OLD_TENANT, DIMS)


def test_a_copy_is_the_template_under_its_own_tenant_scope_and_ids() -> None:
    nodes, rels = copy_rows(template(), "copy-1", np.random.default_rng(1))
    doc, chunk = nodes[0]["props"], nodes[1]["props"]
    key = key_of("copy-1")
    assert doc["tenant_id"] == chunk["tenant_id"] == "copy-1"
    assert doc["scope_key"] == doc["writer_key"] == chunk["scope_key"] == key
    assert doc["id"] == derived_id(DOC_ID, "copy-1") != DOC_ID
    # References keep pointing at the same row: the chunk's document is the copy's document.
    assert chunk["document_id"] == doc["id"]
    assert chunk["text"] == "Maria sold the cargo"
    assert chunk["ft_tf"] == [1, 2]
    assert doc["n"] == 3
    assert [n["labels"] for n in nodes] == [["Document"], ["Chunk"]]
    assert rels == [{"a": 0, "b": 1, "type": "HAS_ROOT", "props": {"scope_key": key}}]


def test_copies_of_one_template_share_no_id_and_no_vector() -> None:
    a, _ = copy_rows(template(), "copy-a", np.random.default_rng(1))
    b, _ = copy_rows(template(), "copy-b", np.random.default_rng(2))
    assert a[1]["props"]["id"] != b[1]["props"]["id"]
    assert a[1]["props"]["embedding"] != b[1]["props"]["embedding"]


def test_the_template_is_not_changed_by_copying() -> None:
    t = template()
    copy_rows(t, "copy-1", np.random.default_rng(1))
    assert t.nodes[1].props["id"] == CHUNK_ID
    assert t.nodes[1].props["embedding"] == unit(1, 2, 3, 4)


def test_derived_ids_look_like_the_products_and_are_stable() -> None:
    new = derived_id(CHUNK_ID, "t")
    assert len(new) == 32
    assert int(new, 16) >= 0
    assert new == derived_id(CHUNK_ID, "t") != derived_id(CHUNK_ID, "u")


def test_a_noisy_vector_is_a_unit_vector_near_the_original() -> None:
    original = unit(*range(1, 385))
    out = noisy(original, np.random.default_rng(0))
    assert len(out) == 384
    assert np.linalg.norm(out) == pytest.approx(1.0)
    cosine = float(np.dot(original, out))
    assert 0.85 < cosine < 0.99


def test_shift_moves_relationship_ends_for_batched_copies() -> None:
    rels = [{"a": 0, "b": 1, "type": "NEXT", "props": {}}]
    assert shift(rels, 5) == [{"a": 5, "b": 6, "type": "NEXT", "props": {}}]
    assert shift(rels, 0) is rels


def test_row_defaults_are_not_shared() -> None:
    a, b = Row({}), Row({})
    a.ids.append("id")
    assert b.ids == []
